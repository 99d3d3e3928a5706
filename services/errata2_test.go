package services_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"parley/services"
)

// The rules of errata 2 that this server implements in services, each as
// it was seen (docs/protocol.md §4, §7, §8.1, §10, §14).

// step is one post of a scripted exchange: who sends what, below which
// earlier step (-1: the root, step 0), and the thread it must leave.
type step struct {
	who, ext, kind string
	parent         int
	await, awaitEx string // the thread's awaiting afterwards ("" = nobody)
	state          services.State
	confirmed      bool
}

// play posts the steps as a thread whose root is steps[0] (an ask) and
// checks each outcome; it returns the thread's id.
func play(t *testing.T, w *world, callers map[string]services.Caller, steps []step) string {
	t.Helper()
	ids := make([]string, len(steps))
	th := ""
	for i, s := range steps {
		// The thread in the body: one party's words repeated across
		// threads are refused (§14 rule 1, errata 2).
		e := env{"kind": s.kind, "body": fmt.Sprintf("%s, step %d: %s by %s", t.Name(), i, s.kind, s.who)}
		if s.ext != "" {
			e["from"] = map[string]string{"extension": s.ext}
		}
		if i > 0 {
			e["thread"] = th
			if s.parent >= 0 {
				e["parent"] = ids[s.parent]
			}
		}
		p := w.must(callers[s.who], e)
		ids[i], th = p.Message.ID, p.Thread.ID
		if !awaitingIs(p.Thread.Awaiting, s.await, s.awaitEx) || p.Thread.State != s.state || p.Thread.Confirmed != s.confirmed {
			t.Fatalf("step %d (%s %s below step %d): thread %s (confirmed %v) awaiting %s; want %s (confirmed %v) awaiting %s/%s",
				i, s.who, s.kind, s.parent, p.Thread.State, p.Thread.Confirmed, str(p.Thread.Awaiting), s.state, s.confirmed, s.await, s.awaitEx)
		}
	}
	return th
}

// TestErrata2AnswerSkipsTheAnswerersOwnQuestion walks §4's "answer"
// row: an answer answers the nearest ask or clarify at or above parent
// that the answering identity did not write itself.
func TestErrata2AnswerSkipsTheAnswerersOwnQuestion(t *testing.T) {
	const alice, bob, carol, ada = "ainotes:alice", "ainotes:bob", "ainotes:carol", "human:ada"
	cases := []struct {
		name  string
		steps []step
	}{
		{"the clarify trap: bob answering alice's reply to his clarify answers her ask", []step{
			{who: "alice", kind: "ask", await: "*", state: "open", confirmed: true},
			{who: "bob", kind: "clarify", parent: 0, await: alice, state: "open", confirmed: true},
			{who: "alice", kind: "answer", parent: 1, await: bob, state: "open", confirmed: true},
			{who: "bob", kind: "answer", parent: 2, await: alice, state: "answered"},
		}},
		{"nested rounds unwind to the ask", []step{
			{who: "alice", kind: "ask", await: "*", state: "open", confirmed: true},
			{who: "bob", kind: "clarify", parent: 0, await: alice, state: "open", confirmed: true},
			{who: "alice", kind: "clarify", parent: 1, await: bob, state: "open", confirmed: true},
			{who: "bob", kind: "answer", parent: 2, await: alice, state: "open", confirmed: true},
			{who: "alice", kind: "answer", parent: 3, await: bob, state: "open", confirmed: true},
			{who: "bob", kind: "answer", parent: 4, await: alice, state: "answered"},
		}},
		{"three rounds deep", []step{
			{who: "alice", kind: "ask", await: "*", state: "open", confirmed: true},
			{who: "bob", kind: "clarify", parent: 0, await: alice, state: "open", confirmed: true},
			{who: "alice", kind: "clarify", parent: 1, await: bob, state: "open", confirmed: true},
			{who: "bob", kind: "clarify", parent: 2, await: alice, state: "open", confirmed: true},
			{who: "alice", kind: "answer", parent: 3, await: bob, state: "open", confirmed: true},
			{who: "bob", kind: "answer", parent: 4, await: alice, state: "open", confirmed: true},
			{who: "alice", kind: "answer", parent: 5, await: bob, state: "open", confirmed: true},
			{who: "bob", kind: "answer", parent: 6, await: alice, state: "answered"},
		}},
		{"a third party answers the clarify for the asker", []step{
			{who: "alice", kind: "ask", await: "*", state: "open", confirmed: true},
			{who: "bob", kind: "clarify", parent: 0, await: alice, state: "open", confirmed: true},
			{who: "carol", kind: "answer", parent: 1, await: bob, state: "open", confirmed: true},
			{who: "bob", kind: "answer", parent: 2, await: alice, state: "answered"},
		}},
		{"own identity from another extension: the question is still one's own", []step{
			{who: "alice", ext: "lead", kind: "ask", await: "*", state: "open", confirmed: true},
			{who: "bob", kind: "clarify", parent: 0, await: alice, awaitEx: "lead", state: "open", confirmed: true},
			// alice/w2 answers bob's clarify: not hers, it awaits bob.
			{who: "alice", ext: "w2", kind: "answer", parent: 1, await: bob, state: "open", confirmed: true},
			// alice/w3 answering below it skips bob's clarify (answered)
			// and alice's ask (her identity's, though another extension
			// wrote it): no question, so it awaits the creator and marks
			// nothing.
			{who: "alice", ext: "w3", kind: "answer", parent: 2, await: alice, awaitEx: "lead", state: "open", confirmed: true},
		}},
		{"an ask answered already is answered again", []step{
			{who: "alice", kind: "ask", await: "*", state: "open", confirmed: true},
			{who: "bob", kind: "answer", parent: 0, await: alice, state: "answered"},
			{who: "carol", kind: "answer", parent: 1, await: alice, state: "answered"},
		}},
		{"a human's answer to its own ask marks nothing", []step{
			{who: "ada", kind: "ask", await: "*", state: "open", confirmed: true},
			{who: "ada", kind: "answer", parent: 0, await: "*", state: "open", confirmed: true},
			{who: "bob", kind: "answer", parent: 1, await: ada, state: "answered"},
		}},
	}
	eachWorld(t, func(t *testing.T, w *world) {
		callers := map[string]services.Caller{"alice": w.agent("alice"), "bob": w.agent("bob"), "carol": w.agent("carol"), "ada": w.human("ada")}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				th := play(t, w, callers, c.steps)
				last := c.steps[len(c.steps)-1]
				if last.await == alice {
					if got := inbox(t, w, callers["alice"]); !slices.Contains(got, th) {
						t.Errorf("alice's inbox %v lacks %s, which awaits her", got, th)
					}
					if got := inbox(t, w, callers["bob"]); slices.Contains(got, th) {
						t.Errorf("bob's inbox %v holds %s, which awaits alice", got, th)
					}
				}
			})
		}
	})
}

// TestErrata2ASupersedingAssertIsNoSelfReply walks §7's exemption: an
// assert under the author's own message, from the same extension, is no
// self_reply when its supersedes names only claims of the author's own
// identity; otherwise the refusal names the way out. The guard still
// applies to the correction.
func TestErrata2ASupersedingAssertIsNoSelfReply(t *testing.T) {
	eachWorldWith(t, guardLimits(20, 0, 0), func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		mod := w.agent("mod", services.RightRead, services.RightWrite, services.RightLock)
		a := w.must(alice, env{"kind": "assert", "body": "The cache holds 10k entries."})
		th := a.Thread.ID
		cases := []struct {
			name   string
			who    services.Caller
			e      env
			reason services.Reason // "" = accepted
		}{
			{"a plain assert under one's own claim", alice, env{"kind": "assert", "parent": a.Message.ID, "body": "Also: it is LRU."}, services.SelfReply},
			{"a note under one's own claim", alice, env{"kind": "note", "parent": a.Message.ID, "body": "See the config."}, services.SelfReply},
			{"a correction superseding one's own claim", alice, env{"kind": "assert", "parent": a.Message.ID, "supersedes": []string{a.Claim.ID}, "body": "The cache holds 20k entries."}, ""},
		}
		for _, c := range cases {
			c.e["thread"] = th
			_, err := w.post(c.who, c.e)
			if c.reason == "" {
				if err != nil {
					t.Errorf("%s: refused %v", c.name, err)
				}
				continue
			}
			r := expectRefusal(t, err, c.reason, "parent")
			for _, way := range []string{"another participant", "another extension", "supersedes"} {
				if !strings.Contains(r.Message, way) {
					t.Errorf("%s: the self_reply message %q does not name the way out %q", c.name, r.Message, way)
				}
			}
		}
		// A lock holder superseding bob's claim under its own message is
		// no correction of its own: self_reply still applies.
		b := w.must(bob, env{"kind": "assert", "thread": th, "body": "Eviction is FIFO."})
		m := w.must(mod, env{"kind": "note", "thread": th, "parent": b.Message.ID, "body": "Checking eviction."})
		w.refused(mod, env{"kind": "assert", "thread": th, "parent": m.Message.ID, "supersedes": []string{b.Claim.ID}, "body": "Eviction is LFU."}, services.SelfReply, "parent")
		// Another extension's claim of the same identity is one's own too.
		w2 := map[string]string{"extension": "w2"}
		c := w.must(alice, env{"kind": "assert", "thread": th, "from": w2, "body": "The TTL is 5 min."})
		n := w.must(alice, env{"kind": "note", "thread": th, "parent": c.Message.ID, "body": "Measured it."})
		w.must(alice, env{"kind": "assert", "thread": th, "parent": n.Message.ID, "supersedes": []string{c.Claim.ID}, "body": "The TTL is 10 min."})
		// The guard still applies: a correction repeating an earlier body
		// is a duplicate.
		d := w.must(alice, env{"kind": "assert", "thread": th, "parent": b.Message.ID, "body": "Shards: 4."})
		w.refused(alice, env{"kind": "assert", "thread": th, "parent": d.Message.ID, "supersedes": []string{d.Claim.ID}, "body": "  SHARDS:   4. "}, services.DuplicateBody, "body")
	})
}
