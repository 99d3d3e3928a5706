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
	w, writers := feedWorld(t)
	reader := w.agent("reader", services.RightRead)
	var done atomic.Bool
	rg, readers := followers(&done, func(since string) ([]string, string, error) {
		page, err := w.forum.Events(w.ctx, reader, services.EventsQuery{Since: since, Limit: "200"})
		var ids []string
		for _, e := range page.Events {
			ids = append(ids, e.ID)
		}
		return ids, page.Cursor, err
	})
	writeAll(t, writers, func(who services.Caller, n int) error {
		p, err := w.post(who, env{"kind": "ask", "body": fmt.Sprintf("question %d", n)})
		if err != nil {
			return err
		}
		// decide is a second event (a proposal) in the same thread
		_, err = w.post(who, env{"kind": "decide", "thread": p.Thread.ID, "body": fmt.Sprintf("decided %d", n)})
		return err
	})
	done.Store(true)
	rg.Wait()

	var stored []models.Event
	if err := w.db.Order("seq").Find(&stored).Error; err != nil {
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
	testNoTurnSkippedOrRepeated(t, "")
}

// TestNoTurnSkippedOrRepeatedWaiting is the same with waiting readers: a
// reader that found nothing waits, and is woken and served by its
// process's shared read (inbox_fanout.go) while the writers go on.
func TestNoTurnSkippedOrRepeatedWaiting(t *testing.T) {
	testNoTurnSkippedOrRepeated(t, "1")
}

func testNoTurnSkippedOrRepeated(t *testing.T, wait string) {
	w, writers := feedWorld(t)
	reader := w.agent("reader", services.RightRead)
	var done atomic.Bool
	rg, readers := followers(&done, func(since string) ([]string, string, error) {
		page, err := w.forum.Inbox(w.ctx, reader, services.InboxQuery{Since: since, Limit: "200", Wait: wait})
		var ids []string
		for _, it := range page.Items {
			ids = append(ids, it.Thread.ID)
		}
		return ids, page.Cursor, err
	})
	created := make(chan string, 64*6)
	writeAll(t, writers, func(who services.Caller, n int) error {
		p, err := w.post(who, env{"kind": "ask", "body": fmt.Sprintf("question %d", n)})
		if err == nil {
			created <- p.Thread.ID
		}
		return err
	})
	done.Store(true)
	rg.Wait()
	close(created)
	if rounds, served := w.forum.FanoutStats(); wait != "" {
		t.Logf("%d shared reads served %d woken readers", rounds, served)
	}

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
		for _, id := range r.ids {
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

// feedWorld is a fresh PostgreSQL forum with 64 writers.
func feedWorld(t *testing.T) (*world, []services.Caller) {
	db := dbtest.Fresh(t, "postgres")
	w := &world{t: t, db: db, forum: services.New(db, services.Config{}), ctx: context.Background()}
	var writers []services.Caller
	for i := range 64 {
		writers = append(writers, w.agent(fmt.Sprintf("writer%d", i)))
	}
	return w, writers
}

// seen is what one reader of a feed saw, in order.
type seen struct {
	ids []string
	err error
}

// followers starts three readers that page a since feed with read until
// done is set and a page then comes back empty.
func followers(done *atomic.Bool, read func(since string) (ids []string, cursor string, err error)) (*sync.WaitGroup, []seen) {
	readers := make([]seen, 3)
	var rg sync.WaitGroup
	for i := range readers {
		rg.Add(1)
		go func() {
			defer rg.Done()
			since := ""
			for {
				last := done.Load()
				ids, cursor, err := read(since)
				if err != nil {
					readers[i].err = err
					return
				}
				readers[i].ids = append(readers[i].ids, ids...)
				since = cursor
				if last && len(ids) == 0 {
					return
				}
			}
		}()
	}
	return &rg, readers
}

// writeAll has every writer act 6 times, all writers at once, and waits
// for them.
func writeAll(t *testing.T, writers []services.Caller, act func(who services.Caller, n int) error) {
	var wg sync.WaitGroup
	for _, who := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 6 {
				if err := act(who, n); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
