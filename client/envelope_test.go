package client_test

import (
	"testing"

	"parley/client"
)

// TestActsSetThreadAndParent posts an envelope of every act, built by its
// function, to the real server, in an order the protocol accepts, and
// checks where each was stored (its thread and its parent) and whom the
// thread awaits after it.
func TestActsSetThreadAndParent(t *testing.T) {
	eachDB(t, nil, func(t *testing.T, s *server) {
		alice := client.New(s.URL, s.token(t, "alice", "read,write"))
		bob := client.New(s.URL, s.token(t, "bob", "read,write"))
		mod := client.New(s.URL, s.token(t, "mod", "read,write,lock,verify"))
		ctx := t.Context()
		root, err := alice.Post(ctx, client.Ask("Which port should the service listen on?"))
		if err != nil {
			t.Fatal(err)
		}
		th := root.Thread.ID
		posted := map[string]client.Posted{"ask": root} // by step name
		m := func(name string) *client.Message { return posted[name].Message }
		claim := func() *client.Claim { return posted["assert"].Claim }
		ev := client.Evidence{Kind: "log", Ref: "ss -ltn on host 1"}
		steps := []struct {
			name     string
			who      *client.Client
			build    func() client.Envelope
			parent   string // the step whose message is the stored parent
			awaiting string // the thread's awaiting identity after it, "" for nobody
		}{
			{"clarify", bob, func() client.Envelope { return client.Clarify(m("ask"), "Behind the proxy?") }, "ask", "ainotes:alice"},
			{"reply", alice, func() client.Envelope { return client.Answer(m("clarify"), "Yes, behind it.") }, "clarify", "ainotes:bob"},
			// A note carries the turn; carried to its own author, it awaits anyone.
			{"note", bob, func() client.Envelope { return client.Note(m("reply"), "The proxy holds 443.") }, "reply", "*"},
			{"assert", bob, func() client.Envelope { return client.AssertIn(m("reply"), "443 is bound by the proxy.", ev) }, "reply", "*"},
			{"attest", alice, func() client.Envelope { return client.Attest(claim(), "Seen here too.", ev) }, "assert", "*"},
			{"verify", mod, func() client.Envelope { return client.Verify(claim(), "Checked.", ev) }, "assert", "*"},
			{"refute", alice, func() client.Envelope {
				return client.Refute(claim(), "Not on host 2.", client.Evidence{Kind: "url", Ref: "https://ops.example/hosts/2"})
			}, "assert", "ainotes:bob"},
			// bob corrects his own claim below its message: no self_reply.
			{"supersede", bob, func() client.Envelope {
				return client.Supersede(claim(), "443 is bound by the proxy on host 1 only.", ev)
			}, "assert", "*"},
			{"propose", bob, func() client.Envelope { return client.Propose(m("refute"), "Measure host 2 again.") }, "refute", "ainotes:alice"},
			{"object", alice, func() client.Envelope { return client.Object(m("propose"), "No time for that.") }, "propose", "ainotes:bob"},
			{"answer", bob, func() client.Envelope { return client.Answer(m("object"), "Then 8443 on both.") }, "object", "ainotes:alice"},
			{"followup", alice, func() client.Envelope { return client.AskIn(m("answer"), "And the health check?") }, "answer", "*"},
			{"decide", alice, func() client.Envelope { return client.Decide(m("answer"), "8443.") }, "answer", ""},
			{"mark", alice, func() client.Envelope { return client.Mark(m("decide"), client.Closed, "Done.") }, "decide", ""},
			{"reopen", alice, func() client.Envelope { return client.Reopen(th, "Host 2 changes it.") }, "ask", "*"},
		}
		for _, st := range steps {
			if st.name == "reopen" { // a lock holder confirms the close first
				if _, err := mod.Confirm(ctx, th, client.Closed); err != nil {
					t.Fatal(err)
				}
			}
			out, err := st.who.Post(ctx, st.build())
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			posted[st.name] = out
			msg, want := out.Message, posted[st.parent].Message.ID
			if msg.Thread != th || msg.Parent == nil || *msg.Parent != want {
				t.Errorf("%s: stored in %s below %v, want in %s below %s (%s)", st.name, msg.Thread, msg.Parent, th, want, st.parent)
			}
			got := ""
			if out.Thread.Awaiting != nil {
				got = out.Thread.Awaiting.Identity
			}
			if got != st.awaiting {
				t.Errorf("%s: the thread awaits %q, want %q", st.name, got, st.awaiting)
			}
		}
		if c := posted["supersede"].Claim; len(c.Supersedes) != 1 || c.Supersedes[0] != claim().ID {
			t.Errorf("the superseding claim supersedes %v, want [%s]", c.Supersedes, claim().ID)
		}
	})
}
