// The official TypeScript SDK's OAuth client (OAuthClientProvider, auth())
// against /mcp/oauth, headless: discovery, authorization, the consent form
// submitted as the signed-in human (the session cookie), the code's
// exchange, tools/list and a post, a refresh, then the human revokes the
// grant on the tokens page. Used by TestTypeScriptSDKOAuth.
//
//   node mcp/tsclient/oauth.mjs <base url> <session cookie> <client metadata url>
//
// It exits non-zero, naming the step, on the first surprise.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const [base, cookie, metadataUrl] = process.argv.slice(2);
const serverUrl = new URL(base + "/mcp/oauth");
const redirectUrl = "http://127.0.0.1:1/callback";

function check(step, ok, detail) {
  if (!ok) {
    console.error(`step ${step} failed: ${JSON.stringify(detail)}`);
    process.exit(1);
  }
  console.log(`ok ${step}`);
}

// A provider that keeps everything in memory and, instead of opening a
// browser, remembers where it was sent.
class Provider {
  constructor() {
    this.saved = {};
    this.clientMetadataUrl = metadataUrl;
  }
  get redirectUrl() { return redirectUrl; }
  get clientMetadata() {
    return { client_name: "Parley TS test", redirect_uris: [redirectUrl], grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  state() { return "state-42"; }
  clientInformation() { return this.saved.client; }
  saveClientInformation(c) { this.saved.client = c; }
  tokens() { return this.saved.tokens; }
  saveTokens(t) { this.saved.tokens = t; }
  redirectToAuthorization(url) { this.saved.authorizationUrl = url; }
  saveCodeVerifier(v) { this.saved.verifier = v; }
  codeVerifier() { return this.saved.verifier; }
}

async function rpc(token, method, params, id = 1) {
  const headers = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(serverUrl, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id, method, params }) });
  return { status: res.status, challenge: res.headers.get("www-authenticate") ?? "", body: await res.json() };
}

async function tokenRequest(fields) {
  const res = await fetch(base + "/oauth/token", { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields) });
  return { status: res.status, body: await res.json() };
}

// Discovery starts from the 401; /mcp advertises nothing.
const anonymous = await rpc(null, "tools/list", {});
check("401 names the resource metadata", anonymous.status === 401 &&
  anonymous.challenge.includes(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp/oauth"`), anonymous);
const plain = await fetch(base + "/mcp", { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }) });
check("/mcp sends no OAuth challenge", plain.status === 200 && !plain.headers.get("www-authenticate"), plain.status);
for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
  const res = await fetch(base + path);
  check(`no metadata at ${path}`, res.status === 404, res.status);
}

// 1. The SDK discovers, picks the metadata URL as client_id, and sends the
// browser to the authorization endpoint.
const provider = new Provider();
let transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
let client = new Client({ name: "parley-ts-oauth", version: "1.0.0" });
let refused;
try {
  await client.connect(transport);
} catch (e) {
  refused = e;
}
check("connect asks for authorization", refused instanceof UnauthorizedError && provider.saved.authorizationUrl, String(refused));
const authorizationUrl = new URL(provider.saved.authorizationUrl);
check("authorization request", authorizationUrl.searchParams.get("client_id") === metadataUrl &&
  authorizationUrl.searchParams.get("code_challenge_method") === "S256" &&
  authorizationUrl.searchParams.get("resource") === serverUrl.href, authorizationUrl.href);

// 2. The browser: the authorization endpoint sends it to the consent page.
const toConsent = await fetch(authorizationUrl, { redirect: "manual" });
const consentUrl = new URL(toConsent.headers.get("location") ?? "", base);
check("redirect to consent", toConsent.status === 302 && consentUrl.pathname === "/oauth/consent", toConsent.status);
const page = await fetch(consentUrl, { headers: { Cookie: cookie } });
const html = await page.text();
check("consent page names the client", page.status === 200 && html.includes("Parley TS test") && html.includes(metadataUrl), page.status);
check("consent page policy", /form-action 'self' http:\/\/127\.0\.0\.1:1/.test(page.headers.get("content-security-policy") ?? ""),
  page.headers.get("content-security-policy"));
const csrf = html.match(/name="_csrf" value="([^"]+)"/)[1];
const id = html.match(/name="id" value="([^"]+)"/)[1];

// 3. The human approves, as a new agent with read and write.
const form = new URLSearchParams([["_csrf", csrf], ["id", id], ["handle", "tsagent"], ["rights", "read"], ["rights", "write"], ["decision", "approve"]]);
const approved = await fetch(base + "/oauth/consent", { method: "POST", redirect: "manual",
  headers: { Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded" }, body: form });
const back = new URL(approved.headers.get("location") ?? "about:blank");
check("back to the client with a code", approved.status === 303 && back.origin + back.pathname === redirectUrl && back.searchParams.get("code"), { status: approved.status, location: approved.headers.get("location"), body: approved.status === 303 ? "" : await approved.text() });
check("state", back.searchParams.get("state") === "state-42", back.search);
check("iss (RFC 9207)", back.searchParams.get("iss") === base, back.search);
const code = back.searchParams.get("code");

// 4. The exchange, then the tools over the access token.
await transport.finishAuth(code);
const first = provider.saved.tokens;
check("tokens", first.access_token && first.refresh_token && first.token_type.toLowerCase() === "bearer" && first.expires_in > 0 && first.expires_in <= 900, first);
const replay = await tokenRequest({ grant_type: "authorization_code", code, code_verifier: provider.saved.verifier, redirect_uri: redirectUrl,
  client_id: metadataUrl, resource: serverUrl.href });
check("a code is good once", replay.status === 400 && replay.body.error === "invalid_grant", replay);

transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
client = new Client({ name: "parley-ts-oauth", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
check("tools/list", names.includes("post") && !names.includes("confirm"), names);
const me = await client.callTool({ name: "whoami", arguments: {} });
check("whoami: the granted agent", !me.isError && me.structuredContent.identity === "ainotes:tsagent", me.structuredContent);
const asked = await client.callTool({ name: "post", arguments: { kind: "ask", body: "Did this arrive over OAuth?" } });
check("post", !asked.isError && asked.structuredContent.thread.state === "open", asked.structuredContent);
console.log(`thread ${asked.structuredContent.thread.id}`);

// 5. More than was granted: 403 insufficient_scope, the refusal inside.
const confirm = await rpc(first.access_token, "tools/call", { name: "confirm", arguments: { thread: asked.structuredContent.thread.id } });
check("403 insufficient_scope", confirm.status === 403 && /error="insufficient_scope"/.test(confirm.challenge) && /scope="lock"/.test(confirm.challenge) &&
  confirm.body.error.data.error.reason === "token_right_missing", confirm);

// 6. A refresh rotates: the new pair works, the old refresh token is spent.
const result = await auth(provider, { serverUrl });
const second = provider.saved.tokens;
check("refresh", result === "AUTHORIZED" && second.access_token !== first.access_token && second.refresh_token !== first.refresh_token, second);
const again = await rpc(second.access_token, "tools/list", {});
check("the new access token", again.status === 200 && again.body.result.tools.length === tools.length, again.status);
const reused = await tokenRequest({ grant_type: "refresh_token", refresh_token: first.refresh_token, client_id: metadataUrl, resource: serverUrl.href });
check("a refresh token is good once", reused.status === 400 && reused.body.error === "invalid_grant", reused);

// 7. The human revokes the grant on the tokens page: access and refresh end.
const tokensPage = await (await fetch(base + "/tokens", { headers: { Cookie: cookie } })).text();
const row = tokensPage.split("<tr").find((r) => r.includes("ainotes:tsagent"));
check("the grant is on the tokens page, owned by the human", row && row.includes("OAuth · Parley TS test"), row);
const tokenId = row.match(/action="\/tokens\/(\d+)\/revoke"/)[1];
const pageCsrf = tokensPage.match(/name="_csrf" value="([^"]+)"/)[1];
const revoked = await fetch(`${base}/tokens/${tokenId}/revoke`, { method: "POST", redirect: "manual",
  headers: { Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ _csrf: pageCsrf }) });
check("revoke", revoked.status === 303, revoked.status);
const after = await rpc(second.access_token, "tools/list", {});
check("access ends", after.status === 401 && /error="invalid_token"/.test(after.challenge) && after.challenge.includes("resource_metadata="), after);
const refreshAfter = await tokenRequest({ grant_type: "refresh_token", refresh_token: second.refresh_token, client_id: metadataUrl, resource: serverUrl.href });
check("refresh ends", refreshAfter.status === 400 && refreshAfter.body.error === "invalid_grant", refreshAfter);

console.log("oauth complete");
