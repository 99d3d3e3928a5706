package services_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"parley/models"
	"parley/services"
)

// TestFanoutAnswersAsOwnRead: waiting inboxes woken together are served by
// their process's shared read (one read for all of them, issue 31 item 3),
// and each answers exactly what its own inbox read would: the turns for
// its identity and for anyone, with an extension only its own or none,
// not the addressed view's asks to anyone, never its own questions, cut
// at its limit, with its cursor. The writes go through a second Forum on
// the same database, as another process's would, so that every waiter is
// still waiting when they are all in; then the waiters are woken at once.
func TestFanoutAnswersAsOwnRead(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, carol, dave, eve := w.agent("alice"), w.agent("bob"), w.agent("carol"), w.agent("dave"), w.agent("eve")
		hal, frankWho := w.human("hal"), w.agent("frank")
		since, err := w.forum.CurrentCursor(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		queries := []struct {
			who services.Caller
			q   fanQuery
		}{
			{bob, fanQuery{}},
			{bob, fanQuery{InboxQuery: services.InboxQuery{Extension: "x"}}},
			{bob, fanQuery{InboxQuery: services.InboxQuery{Extension: "y", Limit: "1"}}},
			{carol, fanQuery{}},
			{carol, fanQuery{InboxQuery: services.InboxQuery{Limit: "2"}}},
			{dave, fanQuery{InboxQuery: services.InboxQuery{Addressed: "true"}}},
			{eve, fanQuery{}},
		}
		answers := make([]<-chan services.Inbox, len(queries))
		for i, c := range queries {
			answers[i] = waitInbox(w.forum, c.who, c.q.from(since, "30"))
		}
		// frank waits too, on his addressed view, which nothing will reach:
		// woken, served nothing, his wait passes and he answers an empty
		// page (items [], not null).
		frank := waitInbox(w.forum, frankWho, services.InboxQuery{Addressed: "true", Wait: "5"})
		awaitWaits(t, w, len(queries)+1)

		other := &world{t: t, db: w.db, forum: services.New(w.db, services.Config{}), ctx: w.ctx}
		other.must(eve, env{"kind": "ask", "body": "Eve asks anyone."})
		other.must(alice, env{"kind": "ask", "to": map[string]string{"identity": "ainotes:bob"}, "body": "For bob."})
		other.must(alice, env{"kind": "ask", "to": map[string]string{"identity": "ainotes:bob", "extension": "y"}, "body": "For bob/y."})
		other.must(alice, env{"kind": "ask", "to": map[string]string{"identity": "ainotes:dave"}, "body": "For dave."})
		other.must(bob, env{"kind": "ask", "body": "Bob asks anyone."})
		ended := other.must(alice, env{"kind": "ask", "body": "Closed at once."})
		other.must(hal, env{"kind": "mark", "thread": ended.Thread.ID, "state": "closed", "body": "Never mind."})
		rounds0, served0 := w.forum.FanoutStats()
		regs0 := w.forum.HubRegistrations()
		w.forum.WakeAll()
		if box := <-frank; box.Items == nil || len(box.Items) != 0 {
			t.Fatalf("frank's waiting inbox answered %#v", box)
		}

		for i, c := range queries {
			var got services.Inbox
			select {
			case got = <-answers[i]:
			case <-time.After(time.Minute): // beyond the wait: only a hang
				t.Fatalf("waiter %d never answered", i)
			}
			want, err := w.forum.Inbox(w.ctx, c.who, c.q.from(since, ""))
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Items) == 0 || !slices.Equal(turnsOf(got), turnsOf(want)) || got.Cursor != want.Cursor {
				t.Errorf("waiter %d (%s %+v) answered %v %s; its own read %v %s", i, c.who.Identity, c.q, turnsOf(got), got.Cursor, turnsOf(want), want.Cursor)
			}
			// The round encodes each item once for all its waiters: the
			// bytes are those of the waiter's own read.
			gotJSON, err1 := json.Marshal(got)
			wantJSON, err2 := json.Marshal(want)
			if err1 != nil || err2 != nil || !bytes.Equal(gotJSON, wantJSON) {
				t.Errorf("waiter %d's answer encodes as\n%s (%v)\nits own read as\n%s (%v)", i, gotJSON, err1, wantJSON, err2)
			}
		}
		// A woken call that its round answers does not register with the
		// hub again; frank, served nothing, does (once for each wake-up).
		if regs := w.forum.HubRegistrations() - regs0; regs >= int64(len(queries)) {
			t.Errorf("the wake made %d registrations with the hub for %d calls answered and frank's", regs, len(queries))
		}
		// One read for all: the waiters of one wake-up join before the
		// round starts (fanout.hold).
		rounds, served := w.forum.FanoutStats()
		if served-served0 < int64(len(queries)) || rounds-rounds0 != 1 {
			t.Fatalf("%d shared reads served %d of %d waiters: want one read serving all", rounds-rounds0, served-served0, len(queries))
		}
	})
}

// fanQuery is an inbox query from a log cursor (the addressed view starts
// from its beginning: its cursors are its own, and the forum is new).
type fanQuery struct{ services.InboxQuery }

func (q fanQuery) from(since, wait string) services.InboxQuery {
	out := q.InboxQuery
	if out.Addressed == "" {
		out.Since = since
	}
	out.Wait = wait
	return out
}

// turnsOf lists a page's turns as thread/message pairs.
func turnsOf(box services.Inbox) []string {
	var out []string
	for _, it := range box.Items {
		out = append(out, it.Thread.ID+"/"+it.Message.ID)
	}
	return out
}

// awaitWaits waits until n waiting calls hold their slot (their first read
// found nothing: they wait).
func awaitWaits(t testing.TB, w *world, n int) {
	t.Helper()
	for give := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var got int64
		if err := w.db.Model(&models.Stream{}).Where("kind = ?", "wait").Count(&got).Error; err != nil {
			t.Fatal(err)
		}
		if got >= int64(n) {
			return
		}
		if time.Now().After(give) {
			t.Fatal(fmt.Sprintf("%d of %d calls wait after 30 s", got, n))
		}
	}
}

// TestFanoutReleasesSlotsBeforeAnswering: the round that serves woken
// waiting inboxes releases their slots before they answer, as far as any
// process can tell (inbox_fanout.go, releaseServed): from the first answer
// on, the token's next waits are admitted up to waits_per_token again, in
// this process and in another, though the round's DELETE may still run.
func TestFanoutReleasesSlotsBeforeAnswering(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		other := services.New(w.db, services.Config{}) // a second server process
		bob, alice := w.agent("bob"), w.agent("alice")
		since, err := w.forum.CurrentCursor(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		limit := w.forum.Limits().WaitsPerToken
		answers := make([]<-chan services.Inbox, limit)
		for i := range answers {
			answers[i] = waitInbox(w.forum, bob, services.InboxQuery{Since: since, Wait: "30"})
		}
		until(t, "bob's waits hold their slots", func() bool { return slots(w, "wait", "token_id", bob.TokenID) == limit })
		rounds0, _ := w.forum.FanoutStats()
		w.must(alice, env{"kind": "ask", "body": "Anyone?"})
		first := <-answers[0]
		if len(first.Items) != 1 {
			t.Fatalf("the first woken wait answered %v", turnsOf(first))
		}
		// At once, bob waits limit times again, from past the ask.
		next := make([]chan error, limit)
		for i := range next {
			f := w.forum
			if i%2 == 1 {
				f = other
			}
			next[i] = make(chan error, 1)
			go func() {
				_, err := f.Inbox(context.Background(), bob, services.InboxQuery{Since: first.Cursor, Wait: "2"})
				next[i] <- err
			}()
		}
		for _, a := range answers[1:] {
			if box := <-a; len(box.Items) != 1 {
				t.Fatalf("a woken wait answered %v", turnsOf(box))
			}
		}
		if rounds, _ := w.forum.FanoutStats(); rounds-rounds0 != 1 {
			t.Fatalf("%d shared reads for one ask, want 1", rounds-rounds0)
		}
		for i, c := range next {
			if err := <-c; err != nil {
				t.Fatalf("bob's next wait %d of %d: %v", i+1, limit, err)
			}
		}
	})
}
