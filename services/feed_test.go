package services_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

// waitInbox runs a waiting inbox call in the background.
func waitInbox(f *services.Forum, who services.Caller, q services.InboxQuery) <-chan services.Inbox {
	out := make(chan services.Inbox, 1)
	go func() {
		box, _ := f.Inbox(context.Background(), who, q)
		out <- box
	}()
	return out
}

// TestWaitingInbox: a waiting inbox answers as soon as a turn opens for the
// caller, not for a turn that opens for someone else, and when the wait
// passes answers nothing with the same cursor (docs/protocol.md §13).
func TestWaitingInbox(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, carol := w.agent("alice"), w.agent("bob"), w.agent("carol")
		box, err := w.forum.Inbox(w.ctx, bob, services.InboxQuery{})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		got := waitInbox(w.forum, bob, services.InboxQuery{Since: box.Cursor, Wait: "1"})
		// A turn for carol wakes bob's call, which reads, finds nothing
		// for him and waits on.
		w.must(alice, env{"kind": "ask", "to": map[string]string{"identity": "ainotes:carol"}, "body": "For carol only."})
		select {
		case b := <-got:
			if len(b.Items) != 0 || b.Cursor != box.Cursor {
				t.Fatalf("a turn for carol reached bob: %+v", b)
			}
			if took := time.Since(start); took < 900*time.Millisecond {
				t.Fatalf("the wait ended after %v, before its second", took)
			}
		case <-time.After(30 * time.Second): // only a hang takes this long
			t.Fatal("the waiting call never returned")
		}

		got = waitInbox(w.forum, bob, services.InboxQuery{Since: box.Cursor, Wait: "20"})
		// Time for the call to begin waiting, so that the post wakes it.
		// Not a condition of the outcome: a call that has not begun finds
		// the turn on its first read and answers the same, and one that
		// is not woken answers nothing after its 20 s.
		time.Sleep(100 * time.Millisecond)
		start = time.Now()
		p := w.must(alice, env{"kind": "ask", "to": map[string]string{"identity": "ainotes:bob"}, "body": "For bob?"})
		select {
		case b := <-got:
			if len(b.Items) != 1 || b.Items[0].Message.ID != p.Message.ID {
				t.Fatalf("bob's waiting inbox answered %+v", b)
			}
			t.Logf("delivered %v after the post", time.Since(start))
		case <-time.After(time.Minute): // beyond the wait: only a hang
			t.Fatal("bob's waiting inbox never returned")
		}
		_ = carol
		w.refused(bob, env{"kind": "note", "body": "x"}, services.InvalidBody) // sanity: nothing else changed
		if _, err := w.forum.Inbox(w.ctx, bob, services.InboxQuery{Wait: "31"}); !isRefusal(err, services.InvalidBody, "wait") {
			t.Fatalf("wait over wait_max_seconds: %v", err)
		}
	})
}

// TestFeedAcrossProcesses runs two forums on one PostgreSQL database, as
// two server processes would be, each with its own feed: a waiting inbox
// on one returns when the other posts; with the first one's listener
// connection killed, a post made while it reconnects still reaches it.
func TestFeedAcrossProcesses(t *testing.T) {
	url := dbtest.FreshURL(t, "postgres")
	db := dbtest.Open(t, url)
	one, two := services.New(db, services.Config{}), services.New(dbtest.Open(t, url), services.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	one.StartFeed(ctx, url, log)
	two.StartFeed(ctx, url, log)
	w := &world{t: t, db: db, forum: one, ctx: ctx}
	alice, bob := w.agent("alice"), w.agent("bob")
	awaitListeners(t, db, 2)

	for round, cut := range []bool{false, true} {
		box, _ := one.Inbox(ctx, bob, services.InboxQuery{})
		got := waitInbox(one, bob, services.InboxQuery{Since: box.Cursor, Wait: "20"})
		// Time for the call to begin waiting (not a condition of the
		// outcome: see TestWaitingInbox).
		time.Sleep(100 * time.Millisecond)
		if cut {
			killListeners(t, db)
		}
		start := time.Now()
		raw := fmt.Appendf(nil, `{"kind":"ask","to":{"identity":"ainotes:bob"},"body":"From the other process? (round %d)"}`, round)
		p, err := two.Post(ctx, alice, raw)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case b := <-got:
			if len(b.Items) != 1 || b.Items[0].Message.ID != p.Message.ID {
				t.Fatalf("round %d: %+v", round, b)
			}
			t.Logf("round %d (listener cut: %v): delivered across processes in %v", round, cut, time.Since(start))
		case <-time.After(time.Minute): // beyond the wait: only a hang
			t.Fatalf("round %d (listener cut: %v): the other process's post never reached the waiting inbox", round, cut)
		}
	}
}

// listenerBackends selects the LISTEN connections of the test's schema.
const listenerBackends = `FROM pg_stat_activity
	WHERE datname = current_database() AND query = 'LISTEN "parley_log_' || current_schema() || '"'`

// awaitListeners waits until n processes listen (StartFeed connects in
// the background).
func awaitListeners(t *testing.T, db *gorm.DB, n int) {
	t.Helper()
	for give := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var got int
		if err := db.Raw("SELECT COUNT(*) " + listenerBackends).Scan(&got).Error; err != nil {
			t.Fatal(err)
		}
		if got >= n {
			return
		}
		if time.Now().After(give) {
			t.Fatalf("%d of %d listeners connected after 30 s", got, n)
		}
	}
}

// killListeners ends every LISTEN connection of the test database, as a
// network failure or a database restart would.
func killListeners(t *testing.T, db *gorm.DB) {
	t.Helper()
	var n int
	err := db.Raw("SELECT COUNT(pg_terminate_backend(pid)) " + listenerBackends).Scan(&n).Error
	if err != nil || n < 2 {
		t.Fatalf("killed %d listeners: %v", n, err)
	}
}

func isRefusal(err error, reason services.Reason, field string) bool {
	var r *services.Refusal
	return asRefusal(err, &r) && r.Reason == reason && r.Field == field
}
