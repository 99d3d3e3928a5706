package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"parley/services"
)

// TestBareFanoutWakesAtTheAsk: the bare handler's waiting inbox, the
// fan-out's limit, parks a call until a Parley process announces a turn
// anyone may take, and answers it the ask that Parley's inbox would show:
// the thread and its message.
func TestBareFanoutWakesAtTheAsk(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newBareWorld(t, ctx)
	forum, tok, who, pool, url := w.forum, w.tok, w.who, w.pool, w.url
	forum.StartFeed(ctx, url, slog.New(slog.DiscardHandler)) // the ask is announced
	b := newBare(pool)
	app := b.app()
	heard := make(chan error, 1)
	go func() { heard <- b.listen(ctx, url) }()

	type answer struct {
		status int
		box    services.Inbox
		err    error
	}
	got := make(chan answer, 1)
	go func() {
		req := httptest.NewRequest("GET", "/api/v1/inbox?wait=120&limit=1", nil)
		req.Header.Set("Authorization", "Bearer "+tok.Secret)
		resp, err := app.Test(req, -1)
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		a := answer{status: resp.StatusCode}
		a.err = json.Unmarshal(raw, &a.box)
		got <- a
	}()
	// The call is parked and the bare process listens: then the ask.
	deadline := time.Now().Add(time.Minute)
	for {
		var listening int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND query LIKE 'LISTEN "parley_log_%'`).Scan(&listening); err != nil {
			t.Fatal(err)
		}
		if listening >= 2 && b.fan.parked.Load() == 1 { // the forum's feed and the bare handler
			break
		}
		select {
		case err := <-heard:
			t.Fatalf("the bare handler stopped listening: %v", err)
		case a := <-got:
			t.Fatalf("the call answered before the ask: %+v", a)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute: %d calls parked, %d listening", b.fan.parked.Load(), listening)
		}
		time.Sleep(10 * time.Millisecond)
	}
	ask, err := forum.Post(ctx, who, []byte(`{"kind":"ask","body":"Who is there?"}`))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-got:
		if a.err != nil || a.status != 200 {
			t.Fatalf("the woken call: %d %v", a.status, a.err)
		}
		if len(a.box.Items) != 1 || a.box.Items[0].Thread.ID != ask.Thread.ID ||
			a.box.Items[0].Message.ID != ask.Message.ID || a.box.Items[0].Message.Body != "Who is there?" {
			t.Fatalf("the woken call answered %+v, not the ask %s", a.box, ask.Message.ID)
		}
	case <-time.After(time.Minute):
		t.Fatal("the ask woke nothing within a minute")
	}
	if n := b.fan.parked.Load(); n != 0 {
		t.Fatalf("%d calls still counted parked after their answer", n)
	}
}
