package services_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"parley/models"
	"parley/services"
)

// shortBeat is the heartbeat of these tests: long-lived calls re-check
// their caller at each one.
const shortBeat = 20 * time.Millisecond

// hang bounds how long a test waits for a call to end: it fires only when
// the call does not end at all (the default heartbeat is 15 s).
const hang = 30 * time.Second

// slots counts the rows of a kind of slot that a token or session holds.
func slots(w *world, kind, column string, id int64) int {
	var n int64
	if err := w.db.Model(&models.Stream{}).Where("kind = ? AND "+column+" = ?", kind, id).Count(&n).Error; err != nil {
		w.t.Fatal(err)
	}
	return int(n)
}

// until polls cond (a read of the database) until it holds, within hang.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hang)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, hang)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ended waits for a call's result, within hang.
func ended(t *testing.T, what string, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(hang):
		t.Fatalf("%s still running %s after its token was revoked", what, hang)
	}
	return nil
}

func refusedWith(err error, reason services.Reason) bool {
	var r *services.Refusal
	return errors.As(err, &r) && r.Reason == reason
}

// TestRevokedTokenEndsItsLongCalls: a stream and the waiting reads re-check
// their token at each heartbeat (issue 23, item 3): once it is revoked, a
// stream's last item is a parley.error carrying token_invalid, and a
// waiting inbox or get_events call answers token_invalid, within one
// heartbeat rather than at the end of its wait.
func TestRevokedTokenEndsItsLongCalls(t *testing.T) {
	eachWorldWith(t, services.Config{Heartbeat: shortBeat}, func(t *testing.T, w *world) {
		calls := []struct {
			name string
			run  func(ctx context.Context, who services.Caller, since string, last *atomic.Value) error
		}{
			{"stream", func(ctx context.Context, who services.Caller, since string, last *atomic.Value) error {
				return w.forum.Stream(ctx, who, since, func(it services.StreamItem) error { last.Store(it); return nil })
			}},
			{"inbox", func(ctx context.Context, who services.Caller, since string, _ *atomic.Value) error {
				_, err := w.forum.Inbox(ctx, who, services.InboxQuery{Wait: "30", Since: since})
				return err
			}},
			{"get_events", func(ctx context.Context, who services.Caller, since string, _ *atomic.Value) error {
				_, err := w.forum.Events(ctx, who, services.EventsQuery{Wait: "30", Since: since})
				return err
			}},
		}
		for _, c := range calls {
			who := w.agent("listener-" + c.name)
			since, err := w.forum.CurrentCursor(w.ctx)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(w.ctx)
			var last atomic.Value
			done := make(chan error, 1)
			go func() { done <- c.run(ctx, who, since, &last) }()
			kind := "wait"
			if c.name == "stream" {
				kind = "stream"
			}
			until(t, c.name+" holds its slot", func() bool { return slots(w, kind, "token_id", who.TokenID) == 1 })
			if _, err := w.forum.RevokeToken(w.ctx, who.TokenID); err != nil {
				t.Fatal(err)
			}
			err = ended(t, c.name, done)
			cancel()
			if !refusedWith(err, services.TokenInvalid) {
				t.Fatalf("%s after its token was revoked: %v", c.name, err)
			}
			if c.name == "stream" {
				it, _ := last.Load().(services.StreamItem)
				body, ok := it.Data.(services.RefusalBody)
				if it.Type != services.StreamError || !ok || body.Error.Reason != services.TokenInvalid || it.Cursor != "" {
					t.Fatalf("the stream's last item: %+v", it)
				}
			}
			if n := slots(w, kind, "token_id", who.TokenID); n != 0 {
				t.Fatalf("%s ended; %d slots still held", c.name, n)
			}
		}
	})
}

// TestWaitsPerToken: a token holds at most waits_per_token waiting calls at
// once, counted across processes (two Forums on one database), and the
// next is refused rate_limited with a retry_after no later than the
// soonest of its waits ends; another token's waits, the same token's reads
// that find something at once and its reads without wait are served; a
// wait whose client went away frees its slot at once (issue 23, item 4).
func TestWaitsPerToken(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		other := services.New(w.db, services.Config{}) // a second server process
		bob, alice := w.agent("bob"), w.agent("alice")
		if _, err := w.post(alice, env{"kind": "ask", "body": "Anyone there?"}); err != nil {
			t.Fatal(err)
		}
		now, err := w.forum.CurrentCursor(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		limit := w.forum.Limits().WaitsPerToken
		if limit != 8 || w.forum.Manifest(w.ctx).Limits.WaitsPerToken != limit {
			t.Fatalf("waits_per_token %d", limit)
		}
		wait := func(f *services.Forum, ctx context.Context, who services.Caller, q services.EventsQuery) <-chan error {
			done := make(chan error, 1)
			go func() { _, err := f.Events(ctx, who, q); done <- err }()
			return done
		}
		held := make([]context.CancelFunc, limit)
		results := make([]<-chan error, limit)
		for i := range limit {
			f := w.forum
			if i%2 == 1 {
				f = other
			}
			ctx, cancel := context.WithCancel(w.ctx)
			t.Cleanup(cancel)
			held[i], results[i] = cancel, wait(f, ctx, bob, services.EventsQuery{Wait: "30", Since: now})
		}
		until(t, "bob's waits hold their slots", func() bool { return slots(w, "wait", "token_id", bob.TokenID) == limit })

		for _, f := range []*services.Forum{w.forum, other} {
			err := <-wait(f, w.ctx, bob, services.EventsQuery{Wait: "30", Since: now})
			var r *services.Refusal
			if !errors.As(err, &r) || r.Reason != services.RateLimited || r.RetryAfter < 1 || r.RetryAfter > 30 {
				t.Fatalf("wait %d of bob: %v", limit+1, err)
			}
			t.Logf("wait %d of bob refused, retry_after %d s", limit+1, r.RetryAfter)
		}
		// What does not wait is served: a read that finds something, a read
		// without wait; and another token waits.
		if page, err := w.forum.Events(w.ctx, bob, services.EventsQuery{Wait: "30"}); err != nil || len(page.Events) == 0 {
			t.Fatalf("bob's read that finds something: %v %v", page, err)
		}
		if _, err := other.Inbox(w.ctx, bob, services.InboxQuery{Since: ""}); err != nil {
			t.Fatalf("bob's inbox without wait: %v", err)
		}
		if err := <-wait(other, w.ctx, alice, services.EventsQuery{Wait: "1", Since: now}); err != nil {
			t.Fatalf("alice's wait: %v", err)
		}
		// A client goes away (the binding ends the call's context): its
		// slot is free at once, long before its wait would have ended.
		held[0]()
		if err := <-results[0]; err != nil {
			t.Fatalf("the wait whose client went away: %v", err)
		}
		if n := slots(w, "wait", "token_id", bob.TokenID); n != limit-1 {
			t.Fatalf("%d slots after a client went away, want %d", n, limit-1)
		}
		ctx, cancel := context.WithCancel(w.ctx)
		t.Cleanup(cancel)
		results[0] = wait(other, ctx, bob, services.EventsQuery{Wait: "30", Since: now})
		until(t, "a new wait of bob holds the freed slot", func() bool { return slots(w, "wait", "token_id", bob.TokenID) == limit })
		select {
		case err := <-results[0]:
			t.Fatalf("the new wait answered: %v", err)
		default:
		}
		// Every wait ends when its client goes, and frees its slot.
		cancel()
		for _, c := range held[1:] {
			c()
		}
		for i, r := range results {
			if err := ended(t, "a held wait", r); err != nil {
				t.Fatalf("held wait %d: %v", i, err)
			}
		}
		until(t, "the slots are free", func() bool { return slots(w, "wait", "token_id", bob.TokenID) == 0 })
	})
}

// TestLiveStreamsOfASession: a session holds at most 8 /live streams at
// once, across processes, and the next is refused rate_limited while
// another session's is admitted; once the session signs out, each of its
// streams ends with token_invalid within a heartbeat (issue 23, items 3
// and 4).
func TestLiveStreamsOfASession(t *testing.T) {
	eachWorldWith(t, services.Config{Heartbeat: shortBeat}, func(t *testing.T, w *world) {
		other := services.New(w.db, services.Config{Heartbeat: shortBeat})
		if err := w.forum.AddUser(w.ctx, "ada", "correct horse battery"); err != nil {
			t.Fatal(err)
		}
		signIn := func() string {
			s, err := w.forum.SignIn(w.ctx, "ada", "correct horse battery", "test")
			if err != nil {
				t.Fatal(err)
			}
			return s.Token
		}
		ada, again := signIn(), signIn()
		ctx, cancel := context.WithCancel(w.ctx)
		t.Cleanup(cancel)
		live := func(f *services.Forum, session string) (admitted, done <-chan error) {
			first, end := make(chan error, 1), make(chan error, 1)
			go func() {
				started := false
				err := f.Changes(ctx, session, func(int64) error {
					if !started {
						started = true
						first <- nil
					}
					return nil
				})
				if !started {
					first <- err
				}
				end <- err
			}()
			return first, end
		}
		const limit = 8
		var ends []<-chan error
		for i := range limit {
			f := w.forum
			if i%2 == 1 {
				f = other
			}
			admitted, done := live(f, ada)
			if err := <-admitted; err != nil {
				t.Fatalf("live stream %d: %v", i+1, err)
			}
			ends = append(ends, done)
		}
		admitted, _ := live(other, ada)
		var r *services.Refusal
		if err := <-admitted; !errors.As(err, &r) || r.Reason != services.RateLimited || r.RetryAfter < 1 {
			t.Fatalf("live stream %d of a session: %v", limit+1, err)
		}
		admitted, elsewhere := live(w.forum, again)
		if err := <-admitted; err != nil {
			t.Fatalf("another session's live stream: %v", err)
		}
		if err := w.forum.SignOut(w.ctx, ada); err != nil {
			t.Fatal(err)
		}
		for _, done := range ends {
			if err := ended(t, "a live stream", done); !refusedWith(err, services.TokenInvalid) {
				t.Fatalf("a live stream after sign-out: %v", err)
			}
		}
		select {
		case err := <-elsewhere:
			t.Fatalf("the other session's stream ended: %v", err)
		default:
		}
		// Signed out, a page's stream is refused before it starts.
		if admitted, _ := live(w.forum, ada); !refusedWith(<-admitted, services.TokenInvalid) {
			t.Fatal("a signed-out session's live stream was admitted")
		}
		cancel()
		if err := ended(t, "the other session's stream", elsewhere); err != nil {
			t.Fatalf("the other session's stream: %v", err)
		}
	})
}
