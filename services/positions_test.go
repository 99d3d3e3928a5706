package services_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"parley/migrations/dbtest"
	"parley/models"
	"parley/services"
)

// TestNoEventSkippedOrRepeated has 64 writers open threads and mark them on
// PostgreSQL — no lock is shared between threads any more, so their
// transactions commit in any order — while readers follow get_events with
// their since cursors. Every reader must see every event exactly once, in
// ascending position.
func TestNoEventSkippedOrRepeated(t *testing.T) {
	db := dbtest.Fresh(t, "postgres")
	w := &world{t: t, db: db, forum: services.New(db, services.Config{}), ctx: context.Background()}
	reader := w.agent("reader", services.RightRead)
	var writers []services.Caller
	for i := range 64 {
		writers = append(writers, w.agent(fmt.Sprintf("writer%d", i)))
	}
	var done atomic.Bool
	type seen struct {
		ids []string
		err error
	}
	follow := func(out *seen) {
		since := ""
		for {
			last := done.Load()
			page, err := w.forum.Events(w.ctx, reader, services.EventsQuery{Since: since, Limit: "200"})
			if err != nil {
				out.err = err
				return
			}
			for _, e := range page.Events {
				out.ids = append(out.ids, e.ID)
			}
			since = page.Cursor
			if last && len(page.Events) == 0 {
				return
			}
		}
	}
	readers := make([]seen, 3)
	var rg sync.WaitGroup
	for i := range readers {
		rg.Add(1)
		go func() { defer rg.Done(); follow(&readers[i]) }()
	}
	var wg sync.WaitGroup
	for _, who := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 6 {
				p, err := w.post(who, env{"kind": "ask", "body": fmt.Sprintf("question %d", n)})
				if err != nil {
					t.Error(err)
					return
				}
				// decide is a second event (a proposal) in the same thread
				if _, err := w.post(who, env{"kind": "decide", "thread": p.Thread.ID, "body": "decided"}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	rg.Wait()

	var stored []models.Event
	if err := db.Order("seq").Find(&stored).Error; err != nil {
		t.Fatal(err)
	}
	if len(stored) != 64*6*2 {
		t.Fatalf("%d events stored, want %d", len(stored), 64*6*2)
	}
	for i, r := range readers {
		if r.err != nil {
			t.Fatal(r.err)
		}
		if len(r.ids) != len(stored) {
			t.Fatalf("reader %d saw %d events of %d", i, len(r.ids), len(stored))
		}
		for j, e := range stored {
			if r.ids[j] != services.EventKey(e.ID) {
				t.Fatalf("reader %d: event %d is %s, the log has %s there: skipped, repeated or out of order", i, j, r.ids[j], services.EventKey(e.ID))
			}
		}
	}
}

// TestNoTurnSkippedOrRepeated is TestNoEventSkippedOrRepeated for the
// inbox, which reads the log's horizon and its page in one batch: 64
// writers open threads awaiting anyone while readers follow their inbox
// with since cursors. Every reader must see every new turn exactly once.
func TestNoTurnSkippedOrRepeated(t *testing.T) {
	db := dbtest.Fresh(t, "postgres")
	w := &world{t: t, db: db, forum: services.New(db, services.Config{}), ctx: context.Background()}
	reader := w.agent("reader", services.RightRead)
	var writers []services.Caller
	for i := range 64 {
		writers = append(writers, w.agent(fmt.Sprintf("writer%d", i)))
	}
	var done atomic.Bool
	type seen struct {
		threads []string
		err     error
	}
	follow := func(out *seen) {
		since := ""
		for {
			last := done.Load()
			page, err := w.forum.Inbox(w.ctx, reader, services.InboxQuery{Since: since, Limit: "200"})
			if err != nil {
				out.err = err
				return
			}
			for _, it := range page.Items {
				out.threads = append(out.threads, it.Thread.ID)
			}
			since = page.Cursor
			if last && len(page.Items) == 0 {
				return
			}
		}
	}
	readers := make([]seen, 3)
	var rg sync.WaitGroup
	for i := range readers {
		rg.Add(1)
		go func() { defer rg.Done(); follow(&readers[i]) }()
	}
	created := make(chan string, 64*6)
	var wg sync.WaitGroup
	for _, who := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 6 {
				p, err := w.post(who, env{"kind": "ask", "body": fmt.Sprintf("question %d", n)})
				if err != nil {
					t.Error(err)
					return
				}
				created <- p.Thread.ID
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	rg.Wait()
	close(created)

	want := map[string]bool{}
	for id := range created {
		want[id] = true
	}
	if len(want) != 64*6 {
		t.Fatalf("%d threads created, want %d", len(want), 64*6)
	}
	for i, r := range readers {
		if r.err != nil {
			t.Fatal(r.err)
		}
		got := map[string]int{}
		for _, id := range r.threads {
			got[id]++
			if got[id] > 1 {
				t.Fatalf("reader %d saw %s twice", i, id)
			}
			if !want[id] {
				t.Fatalf("reader %d saw %s, which no writer opened", i, id)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("reader %d saw %d turns of %d", i, len(got), len(want))
		}
	}
}
