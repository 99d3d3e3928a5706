// An independent MCP client: the official TypeScript SDK runs a scripted
// session against a running Parley server. Used by TestTypeScriptSDKClient.
//
//   node mcp/tsclient/session.mjs <mcp url> <token A> <token B> <moderator token> <revoked token>
//
// It exits non-zero, naming the step, on the first surprise.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, tokenA, tokenB, tokenMod, tokenRevoked] = process.argv.slice(2);

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
// A model holding read and write is shown every tool but confirm.
check("list tools", names.join(",") === "get_blob,get_claim,get_events,get_manifest,get_statement,inbox,list_claims,list_identities,list_threads,post,put_blob,read_thread,search,whoami", names);
check("titles in sentence case", tools.every((t) => /^[A-Z][a-z ]*( I)?$/.test(t.title ?? "")), tools.map((t) => t.title));

const me = await a.callTool({ name: "whoami", arguments: {} });
check("whoami: one call to start", !me.isError && me.structuredContent.inbox.count === 0 && /^sha256:[0-9a-f]{64}$/.test(me.structuredContent.manifest.digest), me.structuredContent);
check("post schema is the envelope", tools.find((t) => t.name === "post").inputSchema.required.includes("kind"), tools.find((t) => t.name === "post").inputSchema);

const manifest = await a.callTool({ name: "get_manifest", arguments: {} });
check("get_manifest", !manifest.isError && manifest.structuredContent.parley === "1" && manifest.structuredContent.acts.length === 9, manifest.structuredContent);
check("dialectic profile", manifest.structuredContent.profiles.some((p) => p.name === "dialectic" && p.acts.length === 4), manifest.structuredContent.profiles);

const asked = await a.callTool({ name: "post", arguments: { kind: "ask", body: "Which port should the service use?" } });
check("ask", !asked.isError && asked.structuredContent.thread.state === "open", asked.structuredContent);
const thread = asked.structuredContent.thread.id;

const directory = await b.callTool({ name: "list_identities", arguments: {} });
check("list_identities", !directory.isError && directory.structuredContent.identities.some((i) => i.identity === "ainotes:alice" && i.last_active_at !== null), directory.structuredContent);

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
check("read_thread", tree.structuredContent.messages[0].replies.length === 2 && tree.structuredContent.cursor === undefined, tree.structuredContent);
const part = await b.callTool({ name: "read_thread", arguments: { thread, depth: 1, limit: 1 } });
check("read_thread, a part", part.structuredContent.messages.length === 1 && part.structuredContent.messages[0].replies.length === 0 && part.structuredContent.more === false, part.structuredContent);
const newer = await b.callTool({ name: "read_thread", arguments: { thread, since: part.structuredContent.cursor } });
check("read_thread since a cursor", newer.structuredContent.messages.length === 2, newer.structuredContent);

// The moderator finds the proposal in one call and confirms it; confirming
// again is harmless.
const mod = await connect(tokenMod);
const modTools = (await mod.listTools()).tools.map((t) => t.name);
check("a lock holder sees confirm", modTools.includes("confirm"), modTools);
const pending = await mod.callTool({ name: "list_threads", arguments: { confirmed: false } });
check("list_threads confirmed=false", pending.structuredContent.threads.length === 1 && pending.structuredContent.threads[0].id === thread, pending.structuredContent);
for (const round of ["confirm", "confirm again"]) {
  const confirmed = await mod.callTool({ name: "confirm", arguments: { thread, state: "decided" } });
  check(round, !confirmed.isError && confirmed.structuredContent.thread.confirmed === true, confirmed.structuredContent);
}

// An oversized post is a refusal the agent can act on, naming the field.
const big = await a.callTool({ name: "post", arguments: { kind: "note", thread, body: "x".repeat(20000) } });
check("oversized post", big.isError === true && big.structuredContent.error.reason === "invalid_body" && big.structuredContent.error.field === "body" && big.structuredContent.error.status === 413, big.structuredContent);

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

// A revoked token is refused before the session starts: 401.
let unauthorized = null;
try {
  await connect(tokenRevoked);
} catch (err) {
  unauthorized = err;
}
check("revoked token refused at initialize", unauthorized !== null && /401|nauthorized|token_invalid/.test(String(unauthorized?.message ?? unauthorized)), String(unauthorized));

await a.close();
await b.close();
await mod.close();
console.log("session complete");
