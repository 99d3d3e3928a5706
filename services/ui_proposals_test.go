package services_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"parley/services"
)

// TestProposalQueue: the moderators' queue names, for every pending
// proposal, the act that proposed it and what that act replies to — a
// decide with the answer it accepts, a mark with its reason, an answer with
// its question — and leaves out what is confirmed.
func TestProposalQueue(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		ada := w.human("ada")
		reader := w.agent("reader", services.RightRead)

		empty, err := w.forum.Proposals(w.ctx, reader)
		if err != nil || len(empty.Proposals) != 0 || empty.Pending != 0 {
			t.Fatalf("empty queue: %+v %v", empty, err)
		}

		decided := w.must(alice, env{"kind": "ask", "body": "Ship on Friday?"}).Thread.ID
		ans := w.must(bob, env{"kind": "answer", "thread": decided, "body": "Yes: the release branch is green."})
		w.must(ada, env{"kind": "mark", "thread": decided, "state": "answered", "body": "Confirming the answer."})
		w.must(alice, env{"kind": "decide", "thread": decided, "parent": ans.Message.ID, "body": "Friday it is."})

		rejected := w.must(alice, env{"kind": "ask", "body": "Rename the service?"}).Thread.ID
		w.must(alice, env{"kind": "mark", "thread": rejected, "state": "rejected", "body": "Nobody wants the churn."})

		answered := w.must(alice, env{"kind": "ask", "body": "Which port?"})
		w.must(bob, env{"kind": "answer", "thread": answered.Thread.ID, "body": "8443."})

		settled := w.must(alice, env{"kind": "ask", "body": "Settled already?"}).Thread.ID
		w.must(ada, env{"kind": "mark", "thread": settled, "state": "deferred", "body": "Later."})

		q, err := w.forum.Proposals(w.ctx, reader)
		if err != nil {
			t.Fatal(err)
		}
		if q.Pending != 3 || len(q.Proposals) != 3 {
			t.Fatalf("pending %d, listed %d; want 3", q.Pending, len(q.Proposals))
		}
		byThread := map[string]services.Proposal{}
		for _, p := range q.Proposals {
			byThread[p.Thread.ID] = p
		}
		// Most recent activity first.
		if q.Proposals[0].Thread.ID != answered.Thread.ID || q.Proposals[2].Thread.ID != decided {
			t.Fatalf("order %s %s %s", q.Proposals[0].Thread.ID, q.Proposals[1].Thread.ID, q.Proposals[2].Thread.ID)
		}
		cases := []struct {
			thread             string
			kind               services.Kind
			body, parent       string
			record, proposed   services.State
			proposedBy, author string
		}{
			{decided, services.Decide, "Friday it is.", "Yes: the release branch is green.", "answered", "decided", "ainotes:alice", "ainotes:alice"},
			{rejected, services.Mark, "Nobody wants the churn.", "Rename the service?", "open", "rejected", "ainotes:alice", "ainotes:alice"},
			{answered.Thread.ID, services.Answer, "8443.", "Which port?", "open", "answered", "ainotes:bob", "ainotes:bob"},
		}
		for _, c := range cases {
			p, ok := byThread[c.thread]
			switch {
			case !ok:
				t.Fatalf("%s is not in the queue", c.thread)
			case p.Act == nil || p.Act.Kind != c.kind || p.Act.Body != c.body || p.Act.From.Identity != c.author:
				t.Fatalf("%s: act %+v", c.thread, p.Act)
			case p.Parent == nil || p.Parent.Body != c.parent:
				t.Fatalf("%s: parent %+v", c.thread, p.Parent)
			case p.Thread.StateOfRecord != c.record || p.Thread.State != c.proposed || p.Thread.Confirmed || p.Thread.StateLabel != c.proposedBy:
				t.Fatalf("%s: thread %+v", c.thread, p.Thread)
			}
		}
		if _, ok := byThread[settled]; ok {
			t.Fatal("a confirmed thread is in the queue")
		}

		n, err := w.forum.PendingCount(w.ctx, reader)
		if err != nil || n != 3 {
			t.Fatalf("pending count %d %v", n, err)
		}
		if _, err := w.forum.Confirm(w.ctx, ada, rejected, []byte(`{"state":"rejected"}`)); err != nil {
			t.Fatal(err)
		}
		if n, _ := w.forum.PendingCount(w.ctx, reader); n != 2 {
			t.Fatalf("after a confirm: %d pending", n)
		}
		_, err = w.forum.Proposals(w.ctx, services.Caller{Identity: "x", Kind: services.KindLLM})
		expectRefusal(t, err, services.TokenRightMissing)
	})
}

// TestProposalQueueQueries: the queue costs the same number of queries
// for one proposal as for many (no query per proposal).
func TestProposalQueueQueries(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		reader := w.agent("reader", services.RightRead)
		ports := 8442
		propose := func() {
			ports++ // each thread its own port: one party's words across threads are refused (§14 rule 1)
			th := w.must(alice, env{"kind": "ask", "body": fmt.Sprintf("Which port, %d or another?", ports)}).Thread.ID
			ans := w.must(bob, env{"kind": "answer", "thread": th, "body": fmt.Sprintf("%d.", ports)})
			w.must(alice, env{"kind": "decide", "thread": th, "parent": ans.Message.ID, "body": fmt.Sprintf("%d it is.", ports)})
		}
		var queries atomic.Int64
		count := func(*gorm.DB) { queries.Add(1) }
		for _, cb := range []interface {
			Register(string, func(*gorm.DB)) error
		}{w.db.Callback().Query().After("gorm:query"), w.db.Callback().Row().After("gorm:row"), w.db.Callback().Raw().After("gorm:raw")} {
			if err := cb.Register("test:count", count); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() {
			w.db.Callback().Query().Remove("test:count")
			w.db.Callback().Row().Remove("test:count")
			w.db.Callback().Raw().Remove("test:count")
		})
		cost := func() int64 {
			queries.Store(0)
			q, err := w.forum.Proposals(w.ctx, reader)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range q.Proposals {
				if p.Act == nil || p.Parent == nil {
					t.Fatalf("proposal without its act or parent: %+v", p)
				}
			}
			return queries.Load()
		}
		propose()
		one := cost()
		for range 5 {
			propose()
		}
		if six := cost(); six != one || one < 3 || one > 5 {
			t.Fatalf("queries: %d for one proposal, %d for six", one, six)
		}
	})
}
