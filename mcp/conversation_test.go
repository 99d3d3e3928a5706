package mcp_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

// conversationCalls is what the README promises: a question asked, found,
// answered and decided by two agents, and the decision confirmed by a
// moderator, in this many tool calls — each agent's whoami at the start
// included, no polling.
const conversationCalls = 10

// agent is an MCP client that counts its tool calls.
type agent struct {
	c     *client.Client
	calls *int
}

func (a agent) call(t *testing.T, tool string, args map[string]any) map[string]any {
	t.Helper()
	*a.calls++
	failed, out := callTool(t, a.c, tool, args)
	if failed {
		t.Fatalf("%s refused: %v", tool, out)
	}
	return out
}

// TestScriptedConversationCalls plays ask → inbox → answer → decide →
// confirm over MCP as agents that know nothing in advance but their token
// would, and counts the calls.
func TestScriptedConversationCalls(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), fmt.Sprintf("%d tool calls", conversationCalls)) {
		t.Fatalf("README.md does not state the %d tool calls this test holds it to", conversationCalls)
	}
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		srv := start(t, db, services.Config{})
		calls := 0
		connect := func(token string) agent { return agent{httpClient(t, srv.base+"/mcp", token), &calls} }
		alice, bob := connect(srv.token(t, "alice")), connect(srv.token(t, "bob"))
		mod := connect(srv.token(t, "mod", services.RightRead, services.RightWrite, services.RightLock))

		// Each agent starts with one call: who it is, whether work waits,
		// and the manifest's digest (read the manifest only when it changed).
		me := alice.call(t, "whoami", nil)
		if dig(me, "manifest", "digest") != srv.forum.ManifestDigest() {
			t.Fatalf("whoami: %v", me)
		}
		// Alice asks Bob, naming him (list_identities would list him).
		asked := alice.call(t, "post", map[string]any{"kind": "ask", "to": map[string]any{"identity": "ainotes:bob"}, "body": "Which port should the service listen on?"})
		th := dig(asked, "thread", "id")

		if n := dig(bob.call(t, "whoami", nil), "inbox", "count"); n != float64(1) {
			t.Fatalf("bob's inbox count %v", n)
		}
		turn := bob.call(t, "inbox", nil)
		bob.call(t, "post", map[string]any{"kind": "answer", "thread": dig(turn, "items", 0, "thread", "id"),
			"parent": dig(turn, "items", 0, "message", "id"), "body": "8443: 443 belongs to the proxy."})

		back := alice.call(t, "inbox", nil)
		if dig(back, "items", 0, "message", "kind") != "answer" {
			t.Fatalf("alice's inbox: %v", back)
		}
		decided := alice.call(t, "post", map[string]any{"kind": "decide", "thread": th, "parent": dig(back, "items", 0, "message", "id"), "body": "8443 it is."})
		if dig(decided, "thread", "confirmed") != false {
			t.Fatalf("a model's decide is a proposal: %v", decided)
		}

		mod.call(t, "whoami", nil)
		pending := mod.call(t, "list_threads", map[string]any{"confirmed": false})
		proposal := dig(pending, "threads", 0).(map[string]any)
		done := mod.call(t, "confirm", map[string]any{"thread": proposal["id"], "state": proposal["state"]})
		if dig(done, "thread", "state_of_record") != "decided" || dig(done, "thread", "id") != th {
			t.Fatalf("confirm: %v", done)
		}
		if calls > conversationCalls {
			t.Fatalf("the conversation took %d tool calls; the README promises %d", calls, conversationCalls)
		}
		t.Logf("ask → inbox → answer → decide → confirm: %d tool calls", calls)
	})
}
