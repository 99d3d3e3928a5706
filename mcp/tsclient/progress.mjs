// The errata's scenario (PARLEY.md §13, errata 2) with the official
// TypeScript SDK: a client whose request timeout (12 s) is shorter than the
// wait (25 s) keeps a waiting inbox call alive because it resets its
// timeout on progress. A control call, run at the same time and identical
// but for resetTimeoutOnProgress, must time out: without progress the
// client drops the call. Used by TestTypeScriptSDKProgress.
//
//   node mcp/tsclient/progress.mjs <mcp url> <token>
//
// It prints "progress complete" and the counts, or exits non-zero.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "parley-ts-progress", version: "1.0.0" });
await client.connect(transport);
await client.listTools();

const start = Date.now();
const seconds = () => ((Date.now() - start) / 1000).toFixed(1);
const counts = { kept: 0, control: 0 };
const wait = (name, reset) =>
  client.callTool({ name: "inbox", arguments: { wait: 25 } }, undefined, {
    timeout: 12000,
    resetTimeoutOnProgress: reset,
    onprogress: () => counts[name]++,
  });

const [kept, control] = await Promise.allSettled([wait("kept", true), wait("control", false)]);
console.log(`kept: ${kept.status} after ${seconds()} s, ${counts.kept} progress notifications`);
console.log(`control: ${control.status} (${control.reason?.message ?? "answered"}), ${counts.control} progress notifications before that`);
if (kept.status !== "fulfilled" || kept.value.isError || kept.value.structuredContent.items.length !== 0) {
  console.error(`the waiting call with resetTimeoutOnProgress failed: ${JSON.stringify(kept.reason?.message ?? kept.value)}`);
  process.exit(1);
}
if (counts.kept < 2) {
  console.error("fewer than two progress notifications in a 25 s wait");
  process.exit(1);
}
if (control.status !== "rejected" || !/timed out/i.test(control.reason?.message ?? "")) {
  console.error(`the control call did not time out: ${JSON.stringify(control.reason?.message ?? control.value)}`);
  process.exit(1);
}
await client.close();
console.log("progress complete");
