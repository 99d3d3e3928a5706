package mcp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

const initializeMsg = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// TestEveryMCPAnswerIsJSONRPC sends /mcp what clients get wrong, what
// attackers try and what the library would answer in plain text: every
// answer is JSON-RPC with the status the transport calls for.
func TestEveryMCPAnswerIsJSONRPC(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		srv := start(t, db, services.Config{})
		alice := srv.token(t, "alice")
		revoked := srv.token(t, "gone")
		list, _ := srv.forum.ListTokens(t.Context())
		for _, tok := range list {
			if tok.Identity == "ainotes:gone" {
				srv.forum.RevokeToken(t.Context(), tok.ID)
			}
		}
		call := func(name string, args string) string {
			return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
		}
		host := strings.TrimPrefix(srv.base, "http://")
		for _, c := range []struct {
			name, method, token, body string
			headers                   map[string]string
			status                    int
			code                      float64 // the JSON-RPC error's code; 0 for a result
			reason                    string  // the refusal in error.data or in the tool result
		}{
			{"GET opens no stream", "GET", alice, "", nil, 405, -32600, ""},
			{"DELETE ends no session", "DELETE", alice, "", nil, 405, -32600, ""},
			{"PUT", "PUT", alice, initializeMsg, nil, 405, -32600, ""},
			{"a foreign Origin", "POST", alice, initializeMsg, map[string]string{"Origin": "https://evil.example"}, 403, -32600, ""},
			{"an Origin of null", "POST", alice, initializeMsg, map[string]string{"Origin": "null"}, 403, -32600, ""},
			{"the server's own Origin", "POST", alice, initializeMsg, map[string]string{"Origin": "http://" + host}, 200, 0, ""},
			{"a forged token at initialize", "POST", "prl_00_00", initializeMsg, nil, 401, -32600, "token_invalid"},
			{"a revoked token at tools/list", "POST", revoked, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, nil, 401, -32600, "token_invalid"},
			{"a revoked token at a tool call", "POST", revoked, call("get_manifest", `{}`), nil, 401, -32600, "token_invalid"},
			{"another scheme", "POST", "", initializeMsg, map[string]string{"Authorization": "Basic YTpi"}, 401, -32600, "token_invalid"},
			{"no token: initialize", "POST", "", initializeMsg, nil, 200, 0, ""},
			{"no token: the manifest", "POST", "", call("get_manifest", `{}`), nil, 200, 0, ""},
			{"no token: whoami", "POST", "", call("whoami", `{}`), nil, 401, -32600, "token_missing"},
			{"no token: tools/list", "POST", "", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, nil, 200, 0, ""},
			{"a batch", "POST", alice, "[" + initializeMsg + "]", nil, 400, -32600, ""},
			{"id null", "POST", alice, `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, nil, 400, -32600, ""},
			{"id an object", "POST", alice, `{"jsonrpc":"2.0","id":{},"method":"tools/list"}`, nil, 400, -32600, ""},
			{"jsonrpc 1.0", "POST", alice, `{"jsonrpc":"1.0","id":3,"method":"tools/list"}`, nil, 400, -32600, ""},
			{"not JSON", "POST", alice, `{"jsonrpc":`, nil, 400, -32700, ""},
			{"a number", "POST", alice, `42`, nil, 400, -32600, ""},
			{"text/plain", "POST", alice, initializeMsg, map[string]string{"Content-Type": "text/plain"}, 415, -32600, ""},
			{"params a string", "POST", alice, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"x"}`, nil, 200, -32600, ""},
			{"a tool name that is a number", "POST", alice, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":5}}`, nil, 200, -32600, ""},
			{"initialize params a number", "POST", alice, `{"jsonrpc":"2.0","id":5,"method":"initialize","params":7}`, nil, 200, -32600, ""},
			{"an unknown protocol version", "POST", alice, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, map[string]string{"MCP-Protocol-Version": "1999-01-01"}, 400, -32600, ""},
			{"an oversized post", "POST", alice, call("post", `{"kind":"ask","body":"`+strings.Repeat("x", 20000)+`"}`), nil, 200, 0, "invalid_body"},
			{"an oversized initialize", "POST", alice, strings.Replace(initializeMsg, `"raw"`, `"`+strings.Repeat("r", 20000)+`"`, 1), nil, 413, -32600, "invalid_body"},
			{"past the transport's cap", "POST", alice, call("post", `{"kind":"ask","body":"`+strings.Repeat("x", 2<<20)+`"}`), nil, 413, -32600, "invalid_body"},
		} {
			t.Run(c.name, func(t *testing.T) {
				resp, out := rawMCP(t, srv.base, c.token, c.method, c.body, c.headers)
				if resp.StatusCode != c.status {
					t.Fatalf("status %d, want %d: %v", resp.StatusCode, c.status, out)
				}
				if code, _ := dig(out, "error", "code").(float64); code != c.code {
					t.Fatalf("error code %v, want %v: %v", code, c.code, out)
				}
				reason := dig(out, "error", "data", "error", "reason")
				if c.code == 0 {
					reason = dig(out, "result", "structuredContent", "error", "reason")
				}
				if r, _ := reason.(string); r != c.reason {
					t.Fatalf("reason %q, want %q: %v", r, c.reason, out)
				}
				if msg, _ := dig(out, "error", "message").(string); strings.Contains(msg, "json:") || strings.Contains(msg, "Go ") {
					t.Fatalf("the error speaks Go: %q", msg)
				}
				switch {
				case c.status == 405 && resp.Header.Get("Allow") != "POST":
					t.Fatalf("405 without Allow: POST: %q", resp.Header.Get("Allow"))
				case c.status == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer"):
					t.Fatalf("401 without a Bearer challenge: %q", resp.Header.Get("WWW-Authenticate"))
				case c.status == 413 && !strings.Contains(dig(out, "error", "message").(string), "bytes"):
					t.Fatalf("413 must say how many bytes are allowed: %v", out)
				case c.reason == "invalid_body" && c.code == 0:
					refusal := dig(out, "result", "structuredContent", "error").(map[string]any)
					if refusal["field"] != "body" || refusal["status"] != float64(413) || !strings.Contains(refusal["message"].(string), "16384") {
						t.Fatalf("an oversized post must name body and request_max_bytes: %v", refusal)
					}
				}
			})
		}
		// HEAD has no body to be JSON-RPC; it is refused all the same.
		req, _ := http.NewRequest("HEAD", srv.base+"/mcp", nil)
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 405 {
			t.Fatalf("HEAD /mcp: %v %v", resp, err)
		}
	})
}

// TestChunkedOversizedMCPRequest: a chunked body past the cap, whose path
// fasthttp forgets while refusing it, is still answered in JSON-RPC.
func TestChunkedOversizedMCPRequest(t *testing.T) {
	srv := start(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	for _, size := range []int{20000, 3 << 20} {
		pr, pw := io.Pipe()
		go func() {
			io.WriteString(pw, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"post","arguments":{"kind":"ask","body":"`)
			io.WriteString(pw, strings.Repeat("x", size))
			io.WriteString(pw, `"}}}`)
			pw.Close()
		}()
		req, _ := http.NewRequest("POST", srv.base+"/mcp", pr) // unknown length: chunked
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+srv.token(t, fmt.Sprintf("chunk%d", size)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%d bytes chunked: %v", size, err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(raw), `"jsonrpc":"2.0"`) || !strings.Contains(string(raw), "invalid_body") {
			t.Fatalf("%d bytes chunked: %d %s", size, resp.StatusCode, raw)
		}
	}
}

// TestToolsFollowTheTokensRights: tools/list shows a token only what its
// rights let it call; without a token, everything.
func TestToolsFollowTheTokensRights(t *testing.T) {
	srv := start(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	all := []string{}
	for _, op := range services.MCPOperations() {
		all = append(all, op.MCPTool)
	}
	without := func(names ...string) []string {
		return slices.DeleteFunc(slices.Clone(all), func(n string) bool { return slices.Contains(names, n) })
	}
	for name, c := range map[string]struct {
		token string
		want  []string
	}{
		"no token":     {"", all},
		"reader":       {srv.token(t, "reader", services.RightRead), without("post", "confirm", "put_blob")},
		"writer":       {srv.token(t, "writer"), without("confirm")},
		"lock holder":  {srv.token(t, "mod", services.RightRead, services.RightWrite, services.RightLock), all},
		"a human":      {srv.humanToken(t, "ada"), all},
		"verifier":     {srv.token(t, "vera", services.RightRead, services.RightWrite, services.RightVerify), without("confirm")},
		"only a write": {srv.token(t, "wo", services.RightWrite), []string{"get_manifest", "post", "put_blob"}},
	} {
		t.Run(name, func(t *testing.T) {
			c2 := httpClient(t, srv.base+"/mcp", c.token)
			res, err := c2.ListTools(context.Background(), listTools)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tl := range res.Tools {
				got = append(got, tl.Name)
			}
			slices.Sort(got)
			slices.Sort(c.want)
			if !slices.Equal(got, c.want) {
				t.Fatalf("tools %v, want %v", got, c.want)
			}
		})
	}
}
