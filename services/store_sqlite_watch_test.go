package services_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestFeedAcrossSQLiteProcesses runs two forums on one SQLite file, each on
// a *gorm.DB of its own, as two processes (`parley serve` and `parley mcp`)
// would be, each with its own feed (docs/protocol.md §13, errata 2): a waiting
// inbox on one answers with the turn the other posts, both ways round —
// also when the waiting side writes at the same moment, since its watcher
// must tell the other's write from its own. The bound is a hang guard; the
// latency is logged, not asserted.
func TestFeedAcrossSQLiteProcesses(t *testing.T) {
	url := dbtest.FreshURL(t, "sqlite")
	dbOne, dbTwo := dbtest.Open(t, url), dbtest.Open(t, url)
	one, two := services.New(dbOne, services.Config{}), services.New(dbTwo, services.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	one.StartFeed(ctx, url, log)
	two.StartFeed(ctx, url, log)
	w := &world{t: t, db: dbOne, forum: one, ctx: ctx}
	alice, bob, carol := w.agent("alice"), w.agent("bob"), w.agent("carol")

	const rounds = 20
	var took []time.Duration
	for round := range rounds {
		waiter, writer := one, two
		if round%2 == 1 {
			waiter, writer = two, one
		}
		box, err := waiter.Inbox(ctx, bob, services.InboxQuery{})
		if err != nil {
			t.Fatal(err)
		}
		got := waitInbox(waiter, bob, services.InboxQuery{Since: box.Cursor, Wait: "20"})
		// Let it wait (if not, it finds the post at once: no harm); the
		// random part spreads the posts over the watcher's ticks.
		time.Sleep(30*time.Millisecond + rand.N(50*time.Millisecond))
		// Every third round the waiting side writes too, for carol: its
		// own write must not hide the other's.
		ownDone := make(chan error, 1)
		if round%3 == 2 {
			go func() {
				_, err := waiter.Post(ctx, alice, fmt.Appendf(nil, `{"kind":"ask","to":{"identity":"ainotes:carol"},"body":"Meanwhile, for carol (round %d)."}`, round))
				ownDone <- err
			}()
		} else {
			ownDone <- nil
		}
		start := time.Now()
		p, err := writer.Post(ctx, alice, []byte(fmt.Sprintf(`{"kind":"ask","to":{"identity":"ainotes:bob"},"body":"From the other process, round %d?"}`, round)))
		if err != nil {
			t.Fatal(err)
		}
		select {
		case b := <-got:
			if len(b.Items) != 1 || b.Items[0].Message.ID != p.Message.ID {
				t.Fatalf("round %d: the waiting inbox answered %+v, want the other process's turn %s", round, b, p.Message.ID)
			}
			took = append(took, time.Since(start))
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the other process's post never reached the waiting inbox", round)
		}
		if err := <-ownDone; err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(took)
	t.Logf("delivered across SQLite processes: median %v, max %v over %d rounds", took[len(took)/2], took[len(took)-1], len(took))
	_ = carol
}

// TestFeedSQLiteOwnWrites: with the watcher on, a forum's own writes still
// wake its own waiters at once, and a waiting events call on the other
// forum sees them too.
func TestFeedSQLiteOwnWrites(t *testing.T) {
	url := dbtest.FreshURL(t, "sqlite")
	dbOne := dbtest.Open(t, url)
	one, two := services.New(dbOne, services.Config{}), services.New(dbtest.Open(t, url), services.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	one.StartFeed(ctx, url, log)
	two.StartFeed(ctx, url, log)
	w := &world{t: t, db: dbOne, forum: one, ctx: ctx}
	alice, bob := w.agent("alice"), w.agent("bob")

	page, err := two.Events(ctx, bob, services.EventsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	box, err := one.Inbox(ctx, bob, services.InboxQuery{})
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan services.EventPage, 1)
	go func() {
		p, _ := two.Events(context.Background(), bob, services.EventsQuery{Since: page.Cursor, Wait: "20"})
		events <- p
	}()
	inbox := waitInbox(one, bob, services.InboxQuery{Since: box.Cursor, Wait: "20"})
	time.Sleep(50 * time.Millisecond) // let both wait
	p, err := one.Post(ctx, alice, []byte(`{"kind":"ask","to":{"identity":"ainotes:bob"},"body":"From this process?"}`))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-inbox:
		if len(b.Items) != 1 || b.Items[0].Message.ID != p.Message.ID {
			t.Fatalf("own inbox answered %+v", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a post of this process never reached its own waiting inbox")
	}
	select {
	case e := <-events:
		if len(e.Events) == 0 {
			t.Fatalf("the other process's waiting events call answered nothing: %+v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the other process's waiting events call never answered")
	}
}
