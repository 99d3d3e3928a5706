package web_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"parley/services"
)

// TestScriptedConversation runs a whole conversation over HTTP only: three
// agents, a moderator and a human, checking every participant's inbox and
// the thread's events after each step.
func TestScriptedConversation(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		tokens := map[string]string{
			"alice": a.token("alice"),
			"bob":   a.token("bob"),
			"carol": a.token("carol"),
			"mod":   a.token("mod", services.RightRead, services.RightWrite, services.RightLock),
			"ada":   a.humanToken("ada"),
		}
		people := []string{"alice", "bob", "carol", "mod", "ada"}
		var th string
		var events []string

		// step posts as someone, then checks who has the thread in their
		// inbox and which events the thread has gained.
		step := func(name, who string, env map[string]any, inboxes []string, newEvents ...string) reply {
			t.Helper()
			if th != "" {
				env["thread"] = th
			}
			r := a.post(tokens[who], env)
			th = r.str("thread", "id")
			for _, p := range people {
				in := a.ok(200, "GET", "/api/v1/inbox", tokens[p], nil)
				items := in.get("items").([]any)
				has := len(items) == 1 && in.str("items", 0, "thread", "id") == th
				if want := slices.Contains(inboxes, p); has != want || len(items) > 1 {
					t.Fatalf("after %s: %s's inbox has the thread: %v, want %v (%s)", name, p, has, want, in.raw)
				}
				if has && in.str("items", 0, "message", "id") != r.str("message", "id") && env["kind"] != "note" {
					t.Fatalf("after %s: %s's inbox item is not the message whose turn is open", name, p)
				}
			}
			events = append(events, newEvents...)
			ev := a.ok(200, "GET", "/api/v1/events?thread="+th, tokens["carol"], nil)
			var got []string
			for i := range ev.get("events").([]any) {
				confirmed := ev.get("events", i, "confirmed_at") != nil
				got = append(got, fmt.Sprintf("%s:%s:%v", ev.str("events", i, "type"), ev.str("events", i, "to_state"), confirmed))
			}
			if strings.Join(got, " ") != strings.Join(events, " ") {
				t.Fatalf("after %s: events %v, want %v", name, got, events)
			}
			return r
		}

		root := step("ask", "alice", map[string]any{"kind": "ask", "body": "Which port should the service listen on?"},
			[]string{"bob", "carol", "mod", "ada"}, "state:open:true")
		clar := step("clarify", "bob", map[string]any{"kind": "clarify", "parent": root.str("message", "id"), "body": "Internal or public?"},
			[]string{"alice"})
		ask2 := step("ask to bob", "alice", map[string]any{"kind": "ask", "parent": clar.str("message", "id"), "to": map[string]any{"identity": "ainotes:bob"}, "body": "Public. Which port?"},
			[]string{"bob"})
		ans := step("answer", "carol", map[string]any{"kind": "answer", "parent": ask2.str("message", "id"), "body": "443."},
			[]string{"alice"}, "state:answered:false")
		step("object", "bob", map[string]any{"kind": "object", "parent": ans.str("message", "id"), "body": "443 is the proxy's."},
			[]string{"carol"})
		prop := step("propose", "carol", map[string]any{"kind": "propose", "body": "Then 8443."},
			[]string{"alice"})
		dec := step("decide by a model", "alice", map[string]any{"kind": "decide", "parent": prop.str("message", "id"), "body": "8443."},
			nil, "state:decided:false")
		if dec.get("thread", "confirmed") != false || dec.str("thread", "state_origin") != "llm" {
			t.Fatalf("a model's decide must be a proposal: %s", dec.raw)
		}
		// A model may not confirm; the lock holder does.
		a.refused(services.TokenRightMissing, "POST", "/api/v1/threads/"+th+"/confirm", tokens["alice"], map[string]any{"state": "decided"})
		c := a.ok(200, "POST", "/api/v1/threads/"+th+"/confirm", tokens["mod"], map[string]any{"state": "decided"})
		if c.get("thread", "confirmed") != true {
			t.Fatalf("confirm: %s", c.raw)
		}
		events[len(events)-1] = "state:decided:true" // the proposal's confirmed_at is filled
		events = append(events, "confirm:decided:true")

		closed := step("close by a human", "ada", map[string]any{"kind": "mark", "state": "closed", "body": "Done."},
			nil, "state:closed:true")
		if closed.str("thread", "state_label") != "human:ada" || closed.str("thread", "state_origin") != "user" {
			t.Fatalf("human close: %s", closed.raw)
		}
		for _, who := range people {
			a.refused(services.ThreadLocked, "POST", "/api/v1/messages", tokens[who], map[string]any{"kind": "note", "thread": th, "body": "one more thing"})
		}
		// A model creator's reopen of a human's close is a proposal: the
		// thread stays locked, in nobody's inbox, until it is confirmed.
		re := step("reopen by the creator", "alice", map[string]any{"kind": "reopen", "body": "Reopening: the proxy moved."},
			nil, "state:open:false")
		if re.str("thread", "state") != "open" || re.str("thread", "state_of_record") != "closed" {
			t.Fatalf("reopen: %s", re.raw)
		}
		a.refused(services.ThreadLocked, "POST", "/api/v1/messages", tokens["bob"], map[string]any{"kind": "note", "thread": th, "body": "open yet?"})
		a.ok(200, "POST", "/api/v1/threads/"+th+"/confirm", tokens["mod"], map[string]any{"state": "open"})
		events[len(events)-1] = "state:open:true"
		events = append(events, "confirm:open:true")
		// A note carries the open turn forward: still anyone's.
		step("note after reopen", "bob", map[string]any{"kind": "note", "body": "Noted."}, []string{"bob", "carol", "mod", "ada"})

		tree := a.ok(200, "GET", "/api/v1/threads/"+th, tokens["ada"], nil)
		if got := tree.get("thread", "message_count"); got != float64(10) {
			t.Fatalf("message_count %v, want 10", got)
		}
	})
}
