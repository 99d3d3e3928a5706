package services_test

import (
	"slices"
	"strings"
	"testing"

	"parley/services"
)

// The eight cases that errata 1 fixed (docs/protocol.md §3, §4, §5, §5.2, §6,
// §8), each as it was seen, now with the answer the errata require.

func inbox(t *testing.T, w *world, who services.Caller) []string {
	t.Helper()
	ids, _ := inboxThreads(t, w, who, services.InboxQuery{})
	return ids
}

func TestErrataAnsweringAClarificationAwaitsTheClarifier(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		ask := w.must(alice, env{"kind": "ask", "body": "Which port?"})
		th := ask.Thread.ID
		clar := w.must(bob, env{"kind": "clarify", "thread": th, "parent": ask.Message.ID, "body": "For which service?"})
		ans := w.must(alice, env{"kind": "answer", "thread": th, "parent": clar.Message.ID, "body": "The API."})
		if ans.Thread.State != "open" || !ans.Thread.Confirmed || !awaitingIs(ans.Thread.Awaiting, "ainotes:bob", "") {
			t.Fatalf("after answering the clarify: %s, awaiting %s", ans.Thread.State, str(ans.Thread.Awaiting))
		}
		if got := inbox(t, w, bob); !slices.Contains(got, th) {
			t.Fatalf("bob's inbox %v lacks %s", got, th)
		}
		if got := inbox(t, w, alice); slices.Contains(got, th) {
			t.Fatalf("alice's inbox %v holds %s, which awaits bob", got, th)
		}
		// An answer to the root answers alice's ask and marks answered.
		w.must(bob, env{"kind": "answer", "thread": th, "body": "8443."})
		if got := w.thread(th).Thread; got.State != "answered" || got.Confirmed {
			t.Fatalf("bob's answer to the root ask: %s confirmed=%v", got.State, got.Confirmed)
		}
	})
}

func TestErrataAModelNeverUndoesAHumanDecision(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, carol := w.agent("alice"), w.agent("bob"), w.agent("carol")
		mod := w.agent("mod", services.RightRead, services.RightWrite, services.RightLock)
		ada := w.human("ada")
		th := w.must(alice, env{"kind": "ask", "body": "Ship on Friday?"}).Thread.ID
		w.must(bob, env{"kind": "answer", "thread": th, "body": "Yes."})
		w.must(ada, env{"kind": "decide", "thread": th, "body": "Friday it is."})

		rej := w.must(alice, env{"kind": "mark", "thread": th, "state": "rejected", "body": "No."})
		if rej.Thread.State != "rejected" || rej.Thread.Confirmed || rej.Thread.StateOfRecord != "decided" {
			t.Fatalf("creator's rejected: %+v", rej.Thread)
		}
		w.refused(alice, env{"kind": "reopen", "thread": th, "body": "Again."}, services.ThreadAuthorityMissing, "kind")
		w.refused(alice, env{"kind": "mark", "thread": th, "state": "open", "body": "Open."}, services.TransitionInvalid, "state")
		w.refused(alice, env{"kind": "mark", "thread": th, "state": "deferred", "body": "Later."}, services.TransitionInvalid, "state")
		// The thread is not ended: others still answer into it.
		w.must(carol, env{"kind": "answer", "thread": th, "body": "Friday holds."})
		if got := w.thread(th).Thread; got.StateOfRecord != "decided" || got.State != "rejected" {
			t.Fatalf("after carol's answer: %+v", got)
		}
		// The creator withdraws its proposal by marking the state of record.
		wd := w.must(alice, env{"kind": "mark", "thread": th, "state": "decided", "body": "Withdrawn."})
		if wd.Thread.State != "decided" || !wd.Thread.Confirmed || wd.Thread.StateLabel != "human:ada" || wd.Thread.StateOrigin != "user" {
			t.Fatalf("after the withdrawal: %+v", wd.Thread)
		}
		events, _ := w.forum.Events(w.ctx, mod, services.EventsQuery{Thread: th})
		last := events.Events[len(events.Events)-1]
		if last.Type != "withdraw" || *last.FromState != "rejected" || last.ToState != "decided" || last.Message == nil || last.ConfirmedAt == nil {
			t.Fatalf("last event %+v is not the withdrawal", last)
		}

		// A creator's reopen of a human-confirmed closed is a proposal; the
		// thread stays locked until a lock holder confirms it.
		w.must(ada, env{"kind": "mark", "thread": th, "state": "closed", "body": "Done."})
		re := w.must(alice, env{"kind": "reopen", "thread": th, "body": "One more thing."})
		if re.Thread.State != "open" || re.Thread.Confirmed || re.Thread.StateOfRecord != "closed" {
			t.Fatalf("creator's reopen: %+v", re.Thread)
		}
		for _, who := range []services.Caller{bob, ada, mod} {
			w.refused(who, env{"kind": "note", "thread": th, "body": "Locked?"}, services.ThreadLocked, "thread")
		}
		if got := inbox(t, w, bob); slices.Contains(got, th) {
			t.Fatalf("a locked thread is in bob's inbox: %v", got)
		}
		if _, err := w.forum.Confirm(w.ctx, mod, th, []byte(`{"state":"open"}`)); err != nil {
			t.Fatal(err)
		}
		if got := inbox(t, w, bob); !slices.Contains(got, th) {
			t.Fatalf("the confirmed reopen is not in bob's inbox: %v", got)
		}
		w.must(bob, env{"kind": "note", "thread": th, "body": "Unlocked."})
	})
}

func TestErrataAPendingReopenCanBeTurnedDown(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, ada := w.agent("alice"), w.agent("bob"), w.human("ada")
		th := w.must(alice, env{"kind": "ask", "body": "Done?"}).Thread.ID
		w.must(bob, env{"kind": "answer", "thread": th, "body": "Yes."})
		w.must(ada, env{"kind": "mark", "thread": th, "state": "closed", "body": "Closed."})
		w.must(alice, env{"kind": "reopen", "thread": th, "body": "Wait."})
		w.refused(ada, env{"kind": "mark", "thread": th, "state": "decided", "body": "x"}, services.ThreadLocked)
		p := w.must(ada, env{"kind": "mark", "thread": th, "state": "closed", "body": "No: it stays closed."})
		if p.Thread.State != "closed" || !p.Thread.Confirmed || p.Thread.StateLabel != "human:ada" {
			t.Fatalf("turning down the reopen: %+v", p.Thread)
		}
		w.refused(alice, env{"kind": "mark", "thread": th, "state": "closed", "body": "x"}, services.ThreadLocked)
	})
}

func TestErrataAProposedCloseIsNoEnd(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, carol, ada := w.agent("alice"), w.agent("bob"), w.agent("carol"), w.human("ada")
		th := w.must(alice, env{"kind": "ask", "body": "Rename the repo?"}).Thread.ID
		w.must(bob, env{"kind": "answer", "thread": th, "body": "Yes."})
		w.must(alice, env{"kind": "mark", "thread": th, "state": "closed", "body": "Done."})
		for _, who := range []services.Caller{carol, ada} {
			p := w.must(who, env{"kind": "answer", "thread": th, "body": "Keep the name."})
			if p.Thread.State != "closed" || p.Thread.Confirmed || p.Thread.StateOfRecord != "open" {
				t.Fatalf("answer under a proposed close by %s: %+v", who.Identity, p.Thread)
			}
		}
		w.must(carol, env{"kind": "ask", "thread": th, "to": map[string]string{"identity": "ainotes:bob"}, "body": "Why?"})
		if got := inbox(t, w, bob); !slices.Contains(got, th) {
			t.Fatalf("the follow-up ask is not in bob's inbox: %v", got)
		}
	})
}

func TestErrataNullIsNotAValue(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice := w.agent("alice")
		for _, raw := range []string{`{"kind":"ask","body":null}`, `{"kind":null,"body":"x"}`, `{"kind":"ask","body":"x","provenance":null}`} {
			before, _ := w.counts()
			_, err := w.forum.Post(w.ctx, alice, []byte(raw))
			r := expectRefusal(t, err, services.InvalidBody)
			if !strings.Contains(raw, `"`+r.Field+`":null`) {
				t.Errorf("%s: field %q", raw, r.Field)
			}
			if after, _ := w.counts(); after != before {
				t.Fatalf("%s stored a message", raw)
			}
		}
	})
}

func TestErrataAnAskInsideADecidedThreadCanBeAnswered(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, carol, ada := w.agent("alice"), w.agent("bob"), w.agent("carol"), w.human("ada")
		th := w.must(alice, env{"kind": "ask", "body": "Which license?"}).Thread.ID
		w.must(ada, env{"kind": "decide", "thread": th, "body": "MIT."})
		q := w.must(carol, env{"kind": "ask", "thread": th, "body": "Which year in the header?"})
		if got := inbox(t, w, bob); !slices.Contains(got, th) {
			t.Fatalf("the ask is not in bob's inbox: %v", got)
		}
		p := w.must(bob, env{"kind": "answer", "thread": th, "parent": q.Message.ID, "body": "2026."})
		if p.Thread.State != "decided" || !p.Thread.Confirmed || !awaitingIs(p.Message.Awaiting, "ainotes:carol", "") {
			t.Fatalf("answer in a decided thread: %+v awaiting %s", p.Thread, str(p.Message.Awaiting))
		}
	})
}

func TestErrataManifestTellsTheTurnRule(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		m := w.forum.Manifest(w.ctx)
		if strings.Contains(m.Awaiting, "always one open turn") || !strings.Contains(m.Awaiting, "at most one open turn") ||
			!strings.Contains(m.Awaiting, "never awaits its own author") {
			t.Fatalf("awaiting text: %s", m.Awaiting)
		}
		var answer services.ActInfo
		for _, a := range m.Acts {
			if a.Kind == services.Answer {
				answer = a
			}
		}
		if !strings.Contains(answer.Description, "nearest ask or clarify") || !strings.Contains(answer.Mark, "pending proposal") {
			t.Fatalf("answer act: %+v", answer)
		}
		if len(m.States.Record) < 5 || m.Confirmation.Withdraw == "" {
			t.Fatalf("state of record rules missing: %+v", m.States.Record)
		}
	})
}

func TestErrataLockHolderMarksASideStateOverAProposedClose(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		mod := w.agent("mod", services.RightRead, services.RightWrite, services.RightLock)
		th := w.must(alice, env{"kind": "ask", "body": "Drop Windows?"}).Thread.ID
		w.must(bob, env{"kind": "answer", "thread": th, "body": "Yes."})
		w.must(alice, env{"kind": "mark", "thread": th, "state": "closed", "body": "Closing."})
		p := w.must(mod, env{"kind": "mark", "thread": th, "state": "deferred", "body": "Later."})
		if p.Thread.State != "deferred" || !p.Thread.Confirmed || p.Thread.StateOfRecord != "deferred" {
			t.Fatalf("lock holder's deferred: %+v", p.Thread)
		}
		// A model, too, may propose a side state over a proposed close.
		th2 := w.must(alice, env{"kind": "ask", "body": "Drop macOS?"}).Thread.ID
		w.must(bob, env{"kind": "answer", "thread": th2, "body": "No."})
		w.must(alice, env{"kind": "mark", "thread": th2, "state": "closed", "body": "Closing this one too."})
		p = w.must(alice, env{"kind": "mark", "thread": th2, "state": "obsolete", "body": "Moot."})
		if p.Thread.State != "obsolete" || p.Thread.Confirmed || p.Thread.StateOfRecord != "open" {
			t.Fatalf("creator's obsolete over its proposed close: %+v", p.Thread)
		}
	})
}

func TestErrataAMessageNeverAwaitsItsOwnAuthor(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, ada := w.agent("alice"), w.agent("bob"), w.human("ada")
		th := w.must(ada, env{"kind": "ask", "body": "Who owns CI?"}).Thread.ID
		p := w.must(ada, env{"kind": "answer", "thread": th, "body": "I do, for now."})
		if !awaitingIs(p.Message.Awaiting, "*", "") || !awaitingIs(p.Thread.Awaiting, "*", "") {
			t.Fatalf("a human's answer to its own ask awaits %s", str(p.Message.Awaiting))
		}
		self := w.must(alice, env{"kind": "ask", "to": map[string]string{"identity": "ainotes:alice"}, "body": "Note to self?"})
		if !awaitingIs(self.Message.Awaiting, "*", "") {
			t.Fatalf("an ask addressed to its author awaits %s", str(self.Message.Awaiting))
		}
		// alice asks, bob answers (awaiting alice), alice notes: the note
		// cannot carry alice's own turn, so the turn is re-addressed to
		// anyone and stays on bob's answer.
		th2 := w.must(alice, env{"kind": "ask", "body": "Cache size?"}).Thread.ID
		ans := w.must(bob, env{"kind": "answer", "thread": th2, "body": "64 MiB."})
		note := w.must(alice, env{"kind": "note", "thread": th2, "parent": ans.Message.ID, "body": "Testing it."})
		if !awaitingIs(note.Message.Awaiting, "*", "") || !awaitingIs(note.Thread.Awaiting, "*", "") {
			t.Fatalf("alice's note awaits %s, thread %s", str(note.Message.Awaiting), str(note.Thread.Awaiting))
		}
		box, _ := w.forum.Inbox(w.ctx, alice, services.InboxQuery{})
		found := false
		for _, it := range box.Items {
			found = found || it.Thread.ID == th2 && it.Message.ID == ans.Message.ID
		}
		if !found {
			t.Fatalf("alice's inbox lacks bob's answer as the open turn: %+v", box.Items)
		}
	})
}
