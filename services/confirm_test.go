package services_test

import (
	"testing"

	"parley/services"
)

func TestProposalAndConfirmation(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		creator, worker := w.agent("creator"), w.agent("worker")
		mod := w.agent("mod", services.RightRead, services.RightWrite, services.RightLock)
		reader := w.agent("reader", services.RightRead)
		ada := w.human("ada")

		root := w.must(creator, env{"kind": "ask", "body": "Which port?"})
		th := root.Thread.ID
		ans := w.must(worker, env{"kind": "answer", "thread": th, "body": "8080"})
		dec := w.must(creator, env{"kind": "decide", "thread": th, "parent": ans.Message.ID, "body": "8080 it is"})
		if dec.Thread.State != "decided" || dec.Thread.Confirmed || dec.Thread.StateOrigin != "llm" || dec.Thread.StateLabel != "ainotes:creator" {
			t.Fatalf("a model's decide must be a proposal: %+v", dec.Thread)
		}

		confirm := func(who services.Caller, state string) (services.Confirmed, error) {
			return w.forum.Confirm(w.ctx, who, th, []byte(`{"state":"`+state+`"}`))
		}
		for name, who := range map[string]services.Caller{"creator": creator, "worker": worker, "reader": reader} {
			_, err := confirm(who, "decided")
			t.Run(name+" may not confirm", func(t *testing.T) { expectRefusal(t, err, services.TokenRightMissing) })
		}
		_, err := confirm(mod, "answered")
		expectRefusal(t, err, services.StateChanged, "state")
		_, err = w.forum.Confirm(w.ctx, mod, th, []byte(`{"state":"decided","why":"x"}`))
		expectRefusal(t, err, services.InvalidBody, "why")
		_, err = w.forum.Confirm(w.ctx, mod, th, []byte(`{}`))
		expectRefusal(t, err, services.InvalidBody, "state")
		_, err = w.forum.Confirm(w.ctx, mod, "th_9999", []byte(`{"state":"decided"}`))
		expectRefusal(t, err, services.ThreadNotFound)

		c, err := confirm(mod, "decided")
		if err != nil {
			t.Fatal(err)
		}
		if !c.Thread.Confirmed || c.Thread.State != "decided" || c.Thread.StateConfirmedAt == nil {
			t.Fatalf("confirm did not confirm: %+v", c.Thread)
		}
		// Confirming again what is confirmed changes nothing and says so
		// with the thread: a retried confirm is harmless.
		_, before := w.counts()
		again, err := confirm(ada, "decided")
		if _, after := w.counts(); err != nil || after != before || again.Thread.StateLabel != c.Thread.StateLabel || !again.Thread.Confirmed {
			t.Fatalf("a repeated confirm: %v, %d events became %d, thread %+v", err, before, after, again.Thread)
		}
		_, err = confirm(ada, "closed")
		expectRefusal(t, err, services.StateChanged, "state")

		evs, err := w.forum.Events(w.ctx, reader, services.EventsQuery{Thread: th})
		if err != nil {
			t.Fatal(err)
		}
		types := ""
		for _, e := range evs.Events {
			types += string(e.Type) + ":" + string(e.ToState) + " "
		}
		if types != "state:open state:answered state:decided confirm:decided " {
			t.Fatalf("events %q", types)
		}
		proposal, conf := evs.Events[2], evs.Events[3]
		if proposal.ConfirmedAt == nil || conf.ConfirmedAt == nil || conf.Message != nil || conf.Label != "KI · mod" || conf.Origin != "llm" {
			t.Fatalf("proposal %+v, confirm %+v", proposal, conf)
		}
		if evs.Events[1].ConfirmedAt != nil {
			t.Fatalf("an unconfirmed, superseded proposal got confirmed: %+v", evs.Events[1])
		}
	})
}

func TestProposedClosedDoesNotLockConfirmedClosedDoes(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		creator, worker := w.agent("creator"), w.agent("worker")
		mod := w.agent("mod", services.RightRead, services.RightWrite, services.RightLock)
		ada := w.human("ada")
		th := w.must(creator, env{"kind": "ask", "body": "Done?"}).Thread.ID
		w.must(worker, env{"kind": "answer", "thread": th, "body": "Yes."})
		closed := w.must(creator, env{"kind": "mark", "thread": th, "state": "closed", "body": "closing"})
		if closed.Thread.State != "closed" || closed.Thread.Confirmed {
			t.Fatalf("creator's close must be a proposal: %+v", closed.Thread)
		}
		w.must(worker, env{"kind": "note", "thread": th, "body": "still open for notes"})

		// A lock holder's mark of the current unconfirmed state confirms it.
		conf := w.must(mod, env{"kind": "mark", "thread": th, "state": "closed", "body": "confirmed"})
		if !conf.Thread.Confirmed {
			t.Fatalf("lock holder's same mark did not confirm: %+v", conf.Thread)
		}
		for name, who := range map[string]services.Caller{"worker": worker, "human": ada, "lock holder": mod} {
			t.Run(name+" is refused on a locked thread", func(t *testing.T) {
				w.refused(who, env{"kind": "note", "thread": th, "body": "hello?"}, services.ThreadLocked, "thread")
				w.refused(who, env{"kind": "mark", "thread": th, "state": "open", "body": "re-mark"}, services.ThreadLocked)
			})
		}
		// A model creator's reopen of its confirmed closed thread is a
		// proposal: the thread stays locked until it is confirmed (§5.2).
		re := w.must(creator, env{"kind": "reopen", "thread": th, "body": "one more thing"})
		if re.Thread.State != "open" || re.Thread.Confirmed || re.Thread.StateOfRecord != "closed" || !awaitingIs(re.Thread.Awaiting, "*", "") {
			t.Fatalf("creator's reopen: %+v", re.Thread)
		}
		w.refused(worker, env{"kind": "note", "thread": th, "body": "back in business?"}, services.ThreadLocked, "thread")
		if _, err := w.forum.Confirm(w.ctx, mod, th, []byte(`{"state":"open"}`)); err != nil {
			t.Fatalf("confirm reopen: %v", err)
		}
		w.must(worker, env{"kind": "note", "thread": th, "body": "back in business"})
	})
}

func TestHumanRemarkSetsAnyStateBackwardsToo(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		creator, ada := w.agent("creator"), w.human("ada")
		th := w.must(creator, env{"kind": "ask", "body": "Ship it?"}).Thread.ID
		for _, s := range []string{"decided", "answered", "open", "rejected", "answered", "closed"} {
			p := w.must(ada, env{"kind": "mark", "thread": th, "state": s, "body": "re-mark to " + s})
			if string(p.Thread.State) != s || !p.Thread.Confirmed || p.Thread.StateOrigin != "user" || p.Thread.StateLabel != "human:ada" {
				t.Fatalf("human mark %s: %+v", s, p.Thread)
			}
		}
		w.refused(ada, env{"kind": "mark", "thread": th, "state": "open", "body": "x"}, services.ThreadLocked)
		p := w.must(ada, env{"kind": "reopen", "thread": th, "body": "reopened"})
		if p.Thread.State != "open" || !p.Thread.Confirmed {
			t.Fatalf("human reopen: %+v", p.Thread)
		}
	})
}

// TestConfirmIsIdempotent: confirming the confirmed state answers the
// thread and records nothing; naming the state of record beneath a pending
// proposal is still state_changed (the caller's view is stale).
func TestConfirmIsIdempotent(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		creator, worker := w.agent("creator"), w.agent("worker")
		mod := w.agent("mod", services.RightRead, services.RightWrite, services.RightLock)
		th := w.must(creator, env{"kind": "ask", "body": "Which port?"}).Thread.ID
		w.must(worker, env{"kind": "answer", "thread": th, "body": "8080"})
		confirm := func(state string) (services.Confirmed, error) {
			return w.forum.Confirm(w.ctx, mod, th, []byte(`{"state":"`+state+`"}`))
		}
		for i := range 3 {
			_, before := w.counts()
			c, err := confirm("answered")
			_, after := w.counts()
			if err != nil || !c.Thread.Confirmed || c.Thread.StateOfRecord != "answered" {
				t.Fatalf("confirm %d: %v %+v", i, err, c.Thread)
			}
			if want := map[bool]int64{true: 1, false: 0}[i == 0]; after-before != want {
				t.Fatalf("confirm %d recorded %d events, want %d", i, after-before, want)
			}
		}
		w.must(creator, env{"kind": "mark", "thread": th, "state": "closed", "body": "done"})
		_, err := confirm("answered")
		expectRefusal(t, err, services.StateChanged, "state")
		_, err = confirm("open")
		expectRefusal(t, err, services.StateChanged, "state")
	})
}
