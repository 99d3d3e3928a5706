package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestWitnessOverBothBindings: three tokens of one owner and one of
// another, over MCP and over HTTP against the same server. The one owner's
// identities cannot attest or verify each other's claims (self_attest), a
// claim needs two independent parties to become verified, and a template
// pasted across threads is refused per party (docs/protocol.md §15, §14).
func TestWitnessOverBothBindings(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := start(t, db, services.Config{}) // the reference instance: verify_quorum 2, guard_recent_bodies_party 50
		ctx := context.Background()
		for _, h := range []string{"alice", "bob"} {
			if err := s.forum.AddUser(ctx, h, "correct horse battery"); err != nil {
				t.Fatal(err)
			}
		}
		owned := func(handle, owner string) string {
			tok, err := s.forum.CreateToken(ctx, services.TokenRequest{Handle: handle, Owner: owner,
				Rights: []services.Right{services.RightRead, services.RightWrite, services.RightVerify}})
			if err != nil {
				t.Fatal(err)
			}
			return tok.Secret
		}
		a1, a2, a3, b1 := owned("a1", "alice"), owned("a2", "alice"), owned("a3", "alice"), owned("b1", "bob")
		overHTTP := func(token string, env map[string]any) (int, map[string]any) {
			raw, _ := json.Marshal(env)
			req, _ := http.NewRequest("POST", s.base+"/api/v1/messages", strings.NewReader(string(raw)))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var out map[string]any
			json.NewDecoder(res.Body).Decode(&out)
			return res.StatusCode, out
		}
		mcpA1, mcpA2 := httpClient(t, s.base+"/mcp", a1), httpClient(t, s.base+"/mcp", a2)
		if failed, me := callTool(t, mcpA1, "whoami", nil); failed || me["owner"] != "human:alice" {
			t.Fatalf("whoami over MCP: %v", me)
		}
		ev := []any{map[string]any{"kind": "url", "ref": "https://ci/1"}}
		failed, p := callTool(t, mcpA1, "post", map[string]any{"kind": "assert", "body": "p99 is under 40 ms", "evidence": ev})
		if failed || dig(p, "message", "from", "owner") != "human:alice" || dig(p, "claim", "claimant", "owner") != "human:alice" {
			t.Fatalf("assert over MCP: %v", p)
		}
		act := func(kind string) map[string]any {
			return map[string]any{"kind": kind, "thread": "th_1", "claim": "cl_1", "body": kind + " it", "evidence": ev}
		}
		if failed, r := callTool(t, mcpA2, "post", act("attest")); !failed || reasonOf(r) != "self_attest" {
			t.Fatalf("same owner's attest over MCP: %v", r)
		}
		if status, r := overHTTP(a3, act("verify")); status != 409 || dig(r, "error", "reason") != "self_attest" {
			t.Fatalf("same owner's verify over HTTP: %d %v", status, r)
		}
		if status, r := overHTTP(b1, act("attest")); status != 201 && status != 200 || dig(r, "claim", "support_parties") != float64(1) {
			t.Fatalf("bob's attest over HTTP: %d %v", status, r)
		}
		if status, r := overHTTP(b1, act("verify")); status >= 300 || dig(r, "claim", "status") != "supported" || dig(r, "claim", "verify_quorum") != float64(2) {
			t.Fatalf("one party's verify over HTTP: %d %v; want supported, quorum 2", status, r)
		}
		c1 := s.token(t, "c1", services.RightRead, services.RightWrite, services.RightVerify)
		failed, r := callTool(t, httpClient(t, s.base+"/mcp", c1), "post", act("verify"))
		if failed || dig(r, "claim", "status") != "verified" || dig(r, "claim", "verifications", 1, "owner") != nil {
			t.Fatalf("a second party's verify over MCP: %v", r)
		}
		// A template across threads, per party.
		callTool(t, mcpA1, "post", map[string]any{"kind": "ask", "body": "Great post! Visit my site."})
		if failed, r := callTool(t, mcpA2, "post", map[string]any{"kind": "note", "thread": "th_1", "body": "great post! visit my site."}); !failed || reasonOf(r) != "duplicate_body" {
			t.Fatalf("same owner's template over MCP: %v", r)
		}
		if status, r := overHTTP(a3, map[string]any{"kind": "note", "thread": "th_1", "body": "Great post! Visit my site."}); status != 409 ||
			!strings.Contains(dig(r, "error", "message").(string), "msg_") {
			t.Fatalf("same owner's template over HTTP: %d %v", status, r)
		}
		if status, r := overHTTP(b1, map[string]any{"kind": "note", "thread": "th_1", "body": "Great post! Visit my site."}); status >= 300 {
			t.Fatalf("another party's same words over HTTP: %d %v", status, r)
		}
	})
}
