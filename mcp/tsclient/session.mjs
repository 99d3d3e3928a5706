// An independent MCP client: the official TypeScript SDK runs a scripted
// session against a running Parley server. Used by TestTypeScriptSDKClient.
//
//   node mcp/tsclient/session.mjs <mcp url> <token A> <token B>
//
// It exits non-zero, naming the step, on the first surprise.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, tokenA, tokenB] = process.argv.slice(2);

async function connect(token) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "parley-ts-session", version: "1.0.0" });
  await client.connect(transport);
  // Listing the tools makes the SDK validate every structuredContent
  // against the tool's output schema from here on, refusals included.
  await client.listTools();
  return client;
}

function check(step, ok, detail) {
  if (!ok) {
    console.error(`step ${step} failed: ${JSON.stringify(detail)}`);
    process.exit(1);
  }
  console.log(`ok ${step}`);
}

const a = await connect(tokenA);
const b = await connect(tokenB);

check("server instructions", /get_manifest/.test(a.getInstructions() ?? ""), a.getInstructions());
const { tools } = await a.listTools();
const names = tools.map((t) => t.name).sort();
check("list tools", names.join(",") === "confirm,get_claim,get_events,get_manifest,inbox,list_claims,list_threads,post,read_thread,whoami", names);
check("post schema is the envelope", tools.find((t) => t.name === "post").inputSchema.required.includes("kind"), tools.find((t) => t.name === "post").inputSchema);

const manifest = await a.callTool({ name: "get_manifest", arguments: {} });
check("get_manifest", !manifest.isError && manifest.structuredContent.parley === "1" && manifest.structuredContent.acts.length === 9, manifest.structuredContent);
check("dialectic profile", manifest.structuredContent.profiles.some((p) => p.name === "dialectic" && p.acts.length === 4), manifest.structuredContent.profiles);

const asked = await a.callTool({ name: "post", arguments: { kind: "ask", body: "Which port should the service use?" } });
check("ask", !asked.isError && asked.structuredContent.thread.state === "open", asked.structuredContent);
const thread = asked.structuredContent.thread.id;

const inbox = await b.callTool({ name: "inbox", arguments: {} });
check("inbox of B", inbox.structuredContent.items.some((i) => i.thread.id === thread), inbox.structuredContent);

const answered = await b.callTool({ name: "post", arguments: { kind: "answer", thread, parent: asked.structuredContent.message.id, body: "8443." } });
check("answer", !answered.isError && answered.structuredContent.thread.state === "answered", answered.structuredContent);

const decided = await a.callTool({ name: "post", arguments: { kind: "decide", thread, body: "8443 it is." } });
check("decide (a proposal)", !decided.isError && decided.structuredContent.thread.state === "decided" && decided.structuredContent.thread.confirmed === false, decided.structuredContent);

const refused = await b.callTool({ name: "post", arguments: { kind: "mark", thread, state: "closed", body: "Closing it myself." } });
check("refusal in structuredContent", refused.isError === true && refused.structuredContent.error.reason === "thread_authority_missing", refused);
check("refusal as text", JSON.parse(refused.content[0].text).error.reason === "thread_authority_missing", refused.content);

const self = await a.callTool({ name: "post", arguments: { kind: "note", thread, parent: asked.structuredContent.message.id, body: "Me again." } });
check("self_reply refusal", self.isError === true && self.structuredContent.error.reason === "self_reply", self.structuredContent);

const tree = await b.callTool({ name: "read_thread", arguments: { thread } });
check("read_thread", tree.structuredContent.messages[0].replies.length === 2, tree.structuredContent);

// The dialectic profile: every answer is validated against its output
// schema by the SDK, the claim events of get_events included.
const proof = [{ kind: "url", ref: "https://ci.example/bench/1", note: "benchmark" }];
const asserted = await a.callTool({ name: "post", arguments: { kind: "assert", body: "p99 stays under 40 ms.", evidence: proof, valid_until: "2999-01-01T00:00:00Z" } });
check("assert", !asserted.isError && asserted.structuredContent.claim.status === "unverified" && asserted.structuredContent.message.claim === asserted.structuredContent.claim.id, asserted.structuredContent);
const claim = asserted.structuredContent.claim.id;
const claimThread = asserted.structuredContent.thread.id;
const ownAttest = await a.callTool({ name: "post", arguments: { kind: "attest", thread: claimThread, claim, body: "Mine.", evidence: proof } });
check("self_attest refusal", ownAttest.isError === true && ownAttest.structuredContent.error.reason === "self_attest", ownAttest.structuredContent);
const attested = await b.callTool({ name: "post", arguments: { kind: "attest", thread: claimThread, claim, body: "Reproduced.", evidence: [{ kind: "log", ref: "job 7" }] } });
check("attest", !attested.isError && attested.structuredContent.claim.status === "supported", attested.structuredContent);
const refuted = await b.callTool({ name: "post", arguments: { kind: "refute", thread: claimThread, claim, body: "Not under load.", evidence: [{ kind: "reproducer", ref: "make bench LOAD=1" }] } });
check("refute", !refuted.isError && refuted.structuredContent.claim.status === "refuted", refuted.structuredContent);
const got = await b.callTool({ name: "get_claim", arguments: { claim } });
check("get_claim", !got.isError && got.structuredContent.claim.refutations.length === 1 && got.structuredContent.claim.verified_by === null, got.structuredContent);
const listed = await b.callTool({ name: "list_claims", arguments: { status: "refuted" } });
check("list_claims", !listed.isError && listed.structuredContent.claims[0].id === claim && listed.structuredContent.cursor === null, listed.structuredContent);
const events = await b.callTool({ name: "get_events", arguments: { thread: claimThread } });
check("claim events", !events.isError && events.structuredContent.events.filter((e) => e.type === "claim").length === 3, events.structuredContent);
const missing = await b.callTool({ name: "get_claim", arguments: { claim: "cl_999" } });
check("claim_not_found refusal", missing.isError === true && missing.structuredContent.error.reason === "claim_not_found", missing.structuredContent);

await a.close();
await b.close();
console.log("session complete");
