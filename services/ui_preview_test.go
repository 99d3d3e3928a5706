package services_test

import (
	"fmt"
	"testing"

	"parley/services"
)

// TestPreviewActsAgreesWithPost: in threads of every kind of standing (open
// with a question, under a pending proposal, closed, deferred), each act a
// human could send is previewed exactly when Post takes it, and Post does
// what the preview said: the state it lands on and whom it awaits. The
// reply form offers the previews, so it never offers what Post refuses
// (issue 29 item 5: no reopen on an open thread).
func TestPreviewActsAgreesWithPost(t *testing.T) {
	kinds := []services.Kind{services.Ask, services.Answer, services.Clarify, services.Note, services.Propose,
		services.Object, services.Decide, services.Mark, services.Reopen, services.Assert}
	type setup func(w *world, alice, bob, kay services.Caller) string
	// Each situation is set up afresh for every act, and a model's body is
	// refused when its party said it before anywhere (§14 rule 1): every
	// body is numbered.
	n := 0
	say := func(text string) string { n++; return fmt.Sprintf("%s (take %d)", text, n) }
	situations := []struct {
		name  string
		setup setup
	}{
		{"open question", func(w *world, alice, bob, kay services.Caller) string {
			return w.must(alice, env{"kind": "ask", "body": say("Which port?")}).Thread.ID
		}},
		{"pending proposal", func(w *world, alice, bob, kay services.Caller) string {
			th := w.must(alice, env{"kind": "ask", "body": say("Which port?")}).Thread.ID
			w.must(bob, env{"kind": "answer", "thread": th, "body": say("8443")})
			return th
		}},
		{"closed", func(w *world, alice, bob, kay services.Caller) string {
			th := w.must(alice, env{"kind": "ask", "body": say("Which port?")}).Thread.ID
			w.must(kay, env{"kind": "mark", "thread": th, "state": "closed", "body": "Done."})
			return th
		}},
		{"deferred", func(w *world, alice, bob, kay services.Caller) string {
			th := w.must(alice, env{"kind": "ask", "body": say("Which port?")}).Thread.ID
			w.must(kay, env{"kind": "mark", "thread": th, "state": "deferred", "body": "Later."})
			return th
		}},
	}
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, ada, kay := w.agent("alice"), w.agent("bob"), w.human("ada"), w.human("kay")
		for _, sit := range situations {
			for _, k := range kinds {
				th := sit.setup(w, alice, bob, kay)
				prev, err := w.forum.PreviewActs(w.ctx, ada, th, "", kinds)
				if err != nil {
					t.Fatal(err)
				}
				var p *services.ActPreview
				for i := range prev {
					if prev[i].Kind == k {
						p = &prev[i]
					}
				}
				e := env{"kind": k, "thread": th, "body": "Trying " + string(k) + "."}
				if k == services.Mark && p != nil {
					e["state"] = p.States[0]
				}
				if k == services.Mark && p == nil {
					e["state"] = "answered"
				}
				posted, err := w.post(ada, e)
				switch {
				case p == nil && err == nil:
					t.Errorf("%s: %s is not previewed, but Post took it", sit.name, k)
				case p != nil && err != nil:
					t.Errorf("%s: %s is previewed, but Post refused it: %v", sit.name, k, err)
				case p != nil && k != services.Mark:
					if got := posted.Thread.State; p.To != "" && got != p.To {
						t.Errorf("%s: %s previewed %s %s, landed on %s", sit.name, k, p.Outcome, p.To, got)
					}
					if str(p.Awaiting) != str(posted.Message.Awaiting) {
						t.Errorf("%s: %s previewed awaiting %s, awaits %s", sit.name, k, str(p.Awaiting), str(posted.Message.Awaiting))
					}
				}
			}
		}
	})
}

// TestLocate: an identifier leads to what it names, or is refused as
// naming nothing; words are not identifiers.
func TestLocate(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice := w.agent("alice")
		ask := w.must(alice, env{"kind": "ask", "body": "Which port?"})
		claim := w.must(alice, env{"kind": "assert", "body": "Port 8443 is free.",
			"evidence": []map[string]any{{"kind": "url", "ref": "https://example.org/ports"}}})
		for _, c := range []struct {
			q      string
			want   services.Location
			ref    bool
			reason services.Reason
		}{
			{ask.Thread.ID, services.Location{Thread: ask.Thread.ID}, true, ""},
			{" " + ask.Message.ID + " ", services.Location{Thread: ask.Thread.ID, Message: ask.Message.ID}, true, ""},
			{claim.Claim.ID, services.Location{Thread: claim.Thread.ID, Claim: claim.Claim.ID}, true, ""},
			{"ainotes:alice", services.Location{Identity: "ainotes:alice"}, true, ""},
			{"th_999", services.Location{}, true, services.ThreadNotFound},
			{"msg_999", services.Location{}, true, services.MessageNotFound},
			{"cl_999", services.Location{}, true, services.ClaimNotFound},
			{"ainotes:critic", services.Location{}, true, services.IdentityNotFound},
			{"which port", services.Location{}, false, ""},
		} {
			loc, ref, err := w.forum.Locate(w.ctx, alice, c.q)
			if c.reason != "" {
				expectRefusal(t, err, c.reason)
				continue
			}
			if err != nil || ref != c.ref || loc != c.want {
				t.Errorf("Locate(%q) = %+v, %v, %v; want %+v, %v", c.q, loc, ref, err, c.want, c.ref)
			}
		}
	})
}
