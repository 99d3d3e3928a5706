package services_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"parley/services"
)

// guardLimits lowers the guard's limits so that each rule is reached in a
// few posts.
func guardLimits(bodies, chain, run int) services.Config {
	l := services.DefaultLimits()
	l.GuardRecentBodies, l.GuardChainMax, l.GuardThreadRunMax = bodies, chain, run
	return services.Config{Limits: l}
}

// TestDuplicateBodies is rule 1 of docs/protocol.md §14: a model's body that
// equals, case-folded and whitespace-collapsed, one of its identity's last
// guard_recent_bodies bodies in the thread is refused; nothing is stored.
//
// The rule across threads (errata 2) also sees this thread, and with its
// 50 bodies it would hide the window of 3 this test counts: it is off
// here, and TestDuplicatesAcrossThreadsPerParty tests it.
func TestDuplicateBodies(t *testing.T) {
	cfg := guardLimits(3, 0, 0)
	cfg.Limits.GuardRecentBodiesParty = 0
	eachWorldWith(t, cfg, func(t *testing.T, w *world) {
		alice, bob, ada := w.agent("alice"), w.agent("bob"), w.human("ada")
		mod := w.agent("mod", services.RightRead, services.RightWrite, services.RightLock)
		th := w.must(alice, env{"kind": "ask", "body": "Ship on Friday?"}).Thread.ID
		w.must(bob, env{"kind": "answer", "thread": th, "body": "Ship it on Friday."})

		messages, events := w.counts()
		w.refused(bob, env{"kind": "note", "thread": th, "body": "  SHIP it\ton   friday. "}, services.DuplicateBody, "body")
		w.refused(bob, env{"kind": "note", "thread": th, "from": map[string]any{"extension": "w2"}, "body": "ship it on friday."}, services.DuplicateBody, "body")
		if m, e := w.counts(); m != messages || e != events {
			t.Fatalf("a refused duplicate stored something: messages %d→%d, events %d→%d", messages, m, events, e)
		}
		// Full case folding: ß and SS are one letter case-folded.
		w.must(bob, env{"kind": "note", "thread": th, "body": "Die STRASSE ist frei."})
		w.refused(bob, env{"kind": "note", "thread": th, "body": "die straße ist frei."}, services.DuplicateBody, "body")

		// Another identity, and (with the rule across threads off) another
		// thread, may say the same.
		w.must(alice, env{"kind": "note", "thread": th, "from": map[string]any{"extension": "w1"}, "body": "Ship it on Friday."})
		other := w.must(bob, env{"kind": "ask", "body": "Ship it on Friday."}).Thread.ID
		w.must(alice, env{"kind": "answer", "thread": other, "body": "Yes, ship it."})

		// Only the last guard_recent_bodies (3) count.
		w.must(bob, env{"kind": "note", "thread": th, "body": "one"})
		w.must(bob, env{"kind": "note", "thread": th, "body": "two"})
		w.refused(bob, env{"kind": "note", "thread": th, "body": "ONE"}, services.DuplicateBody, "body")
		w.must(bob, env{"kind": "note", "thread": th, "body": "three"})
		w.must(bob, env{"kind": "note", "thread": th, "body": "four"})
		w.must(bob, env{"kind": "note", "thread": th, "body": "one"})

		// Humans are never refused by the guard; lock holders are, by rule 1.
		w.must(ada, env{"kind": "note", "thread": th, "body": "Noted."})
		w.must(ada, env{"kind": "note", "thread": th, "body": "noted."})
		w.must(mod, env{"kind": "note", "thread": th, "body": "Moderated."})
		w.refused(mod, env{"kind": "note", "thread": th, "body": "MODERATED."}, services.DuplicateBody, "body")
	})
}

// TestNormalizeBody pins what rule 1 compares.
func TestNormalizeBody(t *testing.T) {
	for in, want := range map[string]string{
		"  Ship IT\n\ton  Friday. ": "ship it on friday.",
		"STRASSE":                   "strasse",
		"straße":                    "strasse",
		"ΣΊΣΥΦΟΣ":                   "σίσυφοσ",
		"a\u00a0b":                  "a b", // no-break space is whitespace
	} {
		if got := services.NormalizeBody(in); got != want {
			t.Errorf("NormalizeBody(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRunawayChains is rule 2: a model's reply below guard_chain_max
// unmarked model messages is refused (field parent). Humans, lock holders
// and marks reset the chain; ping-pong and three-way cycles are both cut.
func TestRunawayChains(t *testing.T) {
	eachWorldWith(t, guardLimits(20, 3, 0), func(t *testing.T, w *world) {
		alice, bob, carol, ada := w.agent("alice"), w.agent("bob"), w.agent("carol"), w.human("ada")
		mod := w.agent("mod", services.RightRead, services.RightWrite, services.RightLock)
		reply := func(who services.Caller, th, parent, body string) string {
			w.t.Helper()
			return w.must(who, env{"kind": "note", "thread": th, "parent": parent, "body": body}).Message.ID
		}

		// Ping-pong: root (1), bob (2), alice (3); bob's next is refused.
		root := w.must(alice, env{"kind": "ask", "body": "Tabs or spaces?"})
		th := root.Thread.ID
		m2 := reply(bob, th, root.Message.ID, "Tabs.")
		m3 := reply(alice, th, m2, "Spaces.")
		messages, events := w.counts()
		w.refused(bob, env{"kind": "note", "thread": th, "parent": m3, "body": "Tabs!"}, services.LoopSuspected, "parent")
		w.refused(alice, env{"kind": "decide", "thread": th, "parent": m3, "body": "Spaces, decided."}, services.LoopSuspected, "parent")
		if m, e := w.counts(); m != messages || e != events {
			t.Fatalf("a refused reply stored something")
		}
		// Higher up the chain is short: the way out stays open.
		reply(bob, th, root.Message.ID, "Let us ask the style guide.")
		w.must(alice, env{"kind": "decide", "thread": th, "body": "Spaces, decided."})

		// Three-way cycle A→B→C→A: the fourth link is refused.
		root = w.must(alice, env{"kind": "ask", "body": "Who owns CI?"})
		th = root.Thread.ID
		c2 := reply(bob, th, root.Message.ID, "carol does")
		c3 := reply(carol, th, c2, "alice does")
		w.refused(alice, env{"kind": "note", "thread": th, "parent": c3, "body": "bob does"}, services.LoopSuspected, "parent")

		// A human's message, a lock holder's, a mark reset the chain; a
		// lock holder is never held back by it, a human never refused.
		h := reply(ada, th, c3, "I do.")
		c5 := reply(alice, th, h, "Then alice hands it over.")
		c6 := reply(bob, th, c5, "bob agrees")
		c7 := reply(carol, th, c6, "carol agrees")
		k := reply(mod, th, c7, "Moderator: noted.")
		reply(ada, th, k, "Good.")
		w.refused(alice, env{"kind": "note", "thread": th, "parent": c7, "body": "alice agrees too"}, services.LoopSuspected, "parent")
		reply(bob, th, k, "bob is done")

		root = w.must(alice, env{"kind": "ask", "body": "Which port?"})
		th = root.Thread.ID
		a := w.must(bob, env{"kind": "answer", "thread": th, "body": "8443"}) // marks answered: a proposal, still a mark
		if a.Thread.State != services.Answered {
			t.Fatalf("the answer did not mark: %s", a.Thread.State)
		}
		p2 := reply(alice, th, a.Message.ID, "Why not 443?")
		p3 := reply(bob, th, p2, "The proxy has it.")
		p4 := reply(carol, th, p3, "Confirmed.")
		w.refused(alice, env{"kind": "note", "thread": th, "parent": p4, "body": "Fine."}, services.LoopSuspected, "parent")
	})
}

// TestRunawayThreads is rule 3: after guard_thread_run_max model messages
// in a row the thread is paused — guard "paused", models refused (field
// thread) — until a human or a lock holder acts in it.
func TestRunawayThreads(t *testing.T) {
	eachWorldWith(t, guardLimits(20, 0, 4), func(t *testing.T, w *world) {
		alice, bob, ada := w.agent("alice"), w.agent("bob"), w.human("ada")
		mod := w.agent("mod", services.RightRead, services.RightWrite, services.RightLock)
		n := 0
		note := func(who services.Caller, th string) (services.Posted, error) {
			n++
			// From an extension of its own: alice may note on her own root.
			return w.post(who, env{"kind": "note", "thread": th, "from": map[string]any{"extension": "n"}, "body": fmt.Sprintf("note %d", n)})
		}
		fill := func(th string, count int) services.Posted {
			w.t.Helper()
			var p services.Posted
			for i := range count {
				who := alice
				if i%2 == 0 {
					who = bob
				}
				var err error
				if p, err = note(who, th); err != nil {
					w.t.Fatalf("note %d of %d: %v", i+1, count, err)
				}
			}
			return p
		}
		th := w.must(alice, env{"kind": "ask", "body": "Release notes?"}).Thread.ID // model message 1
		p := fill(th, 3)                                                            // 2, 3, 4
		if p.Thread.Guard != "paused" {
			t.Fatalf("after 4 model messages: guard %v", p.Thread.Guard)
		}
		if g := w.thread(th).Thread.Guard; g != "paused" {
			t.Fatalf("read_thread shows guard %v", g)
		}
		_, err := note(bob, th)
		expectRefusal(t, err, services.LoopSuspected, "thread")
		w.refused(alice, env{"kind": "mark", "thread": th, "state": "deferred", "body": "Later."}, services.LoopSuspected, "thread")

		// A human's message resumes it.
		p = w.must(ada, env{"kind": "note", "thread": th, "body": "Carry on, briefly."})
		if p.Thread.Guard != "active" {
			t.Fatalf("after a human's note: guard %v", p.Thread.Guard)
		}
		fill(th, 4)
		_, err = note(alice, th)
		expectRefusal(t, err, services.LoopSuspected, "thread")
		// A lock holder is not counted, and resumes it too.
		w.must(mod, env{"kind": "note", "thread": th, "body": "Moderator here."})
		fill(th, 4)
		w.must(ada, env{"kind": "note", "thread": th, "body": "Humans are never refused."})

		// A confirmed state change resumes it: a lock holder confirms a
		// model's proposal. A model's withdraw does not.
		th = w.must(alice, env{"kind": "ask", "body": "Freeze the API?"}).Thread.ID // 1
		w.must(bob, env{"kind": "answer", "thread": th, "body": "Yes, freeze it."}) // 2, proposes answered
		w.must(alice, env{"kind": "mark", "thread": th, "state": "rejected", "body": "Not yet."})
		p = w.must(alice, env{"kind": "mark", "thread": th, "state": "open", "body": "Withdrawn."}) // 4: a withdraw
		if p.Thread.Guard != "paused" || !p.Thread.Confirmed {
			t.Fatalf("a model's withdraw reset the run: %+v", p.Thread)
		}
		w.refused(bob, env{"kind": "answer", "thread": th, "body": "Freeze it now."}, services.LoopSuspected, "thread")

		th = w.must(alice, env{"kind": "ask", "body": "Rename the repo?"}).Thread.ID
		w.must(bob, env{"kind": "answer", "thread": th, "body": "Yes: linkd."})
		fill(th, 2)
		c, err := w.forum.Confirm(w.ctx, mod, th, []byte(`{"state":"answered"}`))
		if err != nil || c.Thread.Guard != "active" {
			t.Fatalf("confirm: %v, guard %v", err, c.Thread.Guard)
		}
		fill(th, 3)
	})
}

// TestGuardShapeIsStrict: guard and overdue_since are always on the wire:
// guard "active" when the guard does not hold the thread (§8.1, errata 2),
// overdue_since null when it says nothing (docs/protocol.md §3, errata 1:
// strict nulls).
func TestGuardShapeIsStrict(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		p := w.must(w.agent("alice"), env{"kind": "ask", "body": "Anyone?"})
		raw, _ := json.Marshal(p.Thread)
		for _, want := range []string{`"guard":"active"`, `"overdue_since":null`} {
			if !strings.Contains(string(raw), want) {
				t.Errorf("thread %s lacks %s", raw, want)
			}
		}
		msg, _ := json.Marshal(p.Message)
		if strings.Contains(string(msg), "reply_by") {
			t.Errorf("a message without reply_by shows one: %s", msg)
		}
	})
}

// TestManifestAdvertisesTheGuardProfile checks the profile's entry against
// what the server does: its limits are those in force (and in limits), its
// reasons are listed with status 409, its field is accepted on ask.
func TestManifestAdvertisesTheGuardProfile(t *testing.T) {
	eachWorldWith(t, guardLimits(7, 5, 30), func(t *testing.T, w *world) {
		m := w.forum.Manifest(w.ctx)
		var p *services.ProfileInfo
		for i := range m.Profiles {
			if m.Profiles[i].Name == "guard" {
				p = &m.Profiles[i]
			}
		}
		if p == nil {
			t.Fatalf("no guard profile in %+v", m.Profiles)
		}
		want := map[string]int{"guard_recent_bodies": 7, "guard_chain_max": 5, "guard_thread_run_max": 30, "reply_by_max_hours": 168,
			"guard_recent_bodies_party": 50, "guard_duplicate_window_hours": 24}
		if fmt.Sprint(p.Limits) != fmt.Sprint(want) {
			t.Errorf("profile limits %v, want %v", p.Limits, want)
		}
		raw, _ := json.Marshal(m)
		var doc map[string]any
		json.Unmarshal(raw, &doc)
		limits := doc["limits"].(map[string]any)
		for name, v := range want {
			if limits[name] != float64(v) {
				t.Errorf("manifest limits.%s = %v, want %d", name, limits[name], v)
			}
		}
		if !strings.Contains(string(raw), `"name":"guard","description":`) || !strings.Contains(string(raw), `"acts":[]`) {
			t.Errorf("the guard profile must be listed with its (empty) acts: %s", raw)
		}
		statuses := map[services.Reason]int{}
		for _, r := range m.Reasons {
			statuses[r.Reason] = r.Status
		}
		for _, r := range p.Reasons {
			if statuses[r] != 409 {
				t.Errorf("profile reason %s has status %d in reasons, want 409", r, statuses[r])
			}
		}
		if len(p.Reasons) != 2 || len(p.Rules) < 5 || p.Description == "" {
			t.Errorf("reasons %v, %d rules", p.Reasons, len(p.Rules))
		}
		for field := range p.Fields {
			if m.Envelope.Fields[field] == "" {
				t.Errorf("profile field %s is not among the envelope's fields", field)
			}
			soon := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
			if _, err := w.forum.ParseEnvelope([]byte(`{"kind":"ask","body":"x","` + field + `":"` + soon + `"}`)); err != nil {
				t.Errorf("%s in an hour was refused: %v", field, err)
			}
			if _, err := w.forum.ParseEnvelope([]byte(`{"kind":"ask","body":"x","` + field + `":"2999-01-01T00:00:00Z"}`)); err == nil {
				t.Errorf("%s beyond reply_by_max_hours was accepted", field)
			}
		}
	})
}
