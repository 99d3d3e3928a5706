package client_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"parley/client"
)

// TestRetries runs posts through a proxy that fails them as networks and
// servers do, against the real server: what is Temporary is retried with
// the same idempotency key, within the bound, never sooner than
// retry_after, and stored once; a refusal is returned at once, typed.
func TestRetries(t *testing.T) {
	fast := client.Retry{Attempts: 4, Base: time.Millisecond, Max: 10 * time.Millisecond}
	cases := []struct {
		name     string
		faults   []fault // the first posts' faults; pass after them
		envelope client.Envelope
		posts    int    // posts the proxy sees
		reason   string // the error's reason, "" for success
		replayed bool
		waited   time.Duration // at least this long
	}{
		{name: "answer lost, retry replayed", faults: []fault{loseAnswer}, envelope: client.Ask("Is the proxy on 443?"),
			posts: 2, replayed: true},
		{name: "answer lost twice", faults: []fault{loseAnswer, loseAnswer}, envelope: client.Ask("Is the cache warm?"),
			posts: 3, replayed: true},
		{name: "unavailable, then stored", faults: []fault{unavailable, unavailable}, envelope: client.Ask("Is the disk full?"),
			posts: 3},
		{name: "rate limited waits retry_after", faults: []fault{rateLimited}, envelope: client.Ask("Is the queue empty?"),
			posts: 2, waited: time.Second},
		{name: "attempts bounded", faults: []fault{unavailable, unavailable, unavailable, unavailable, unavailable},
			envelope: client.Ask("Is anyone there?"), posts: 4, reason: client.Unavailable},
		{name: "refusal not retried", envelope: client.Envelope{Kind: client.KindAnswer, Body: "An answer to no thread."},
			posts: 1, reason: client.InvalidBody},
	}
	eachDB(t, nil, func(t *testing.T, s *server) {
		token := s.token(t, "alice", "read,write")
		threads := 0
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				p := newFaultProxy(t, s.URL, func(n int) fault {
					if n <= len(tc.faults) {
						return tc.faults[n-1]
					}
					return pass
				})
				c := client.New(p.URL(), token, client.WithRetry(fast))
				start := time.Now()
				out, err := c.Post(t.Context(), tc.envelope)
				waited := time.Since(start)
				if posts, _ := p.counts(); posts != tc.posts {
					t.Errorf("the proxy saw %d posts, want %d", posts, tc.posts)
				}
				if tc.reason != "" {
					var r *client.Refusal
					if !errors.As(err, &r) || r.Reason != tc.reason {
						t.Fatalf("want refusal %s, got %v", tc.reason, err)
					}
					if tc.reason == client.InvalidBody && r.Field != "thread" {
						t.Errorf("field %q, want thread", r.Field)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				threads++
				// One thread per successful case, in order: a post stored
				// twice would have used up a thread number.
				if want := "th_" + strconv.Itoa(threads); out.Thread.ID != want || out.Thread.MessageCount != 1 {
					t.Errorf("stored in %s with %d messages, want %s with 1", out.Thread.ID, out.Thread.MessageCount, want)
				}
				if out.Replayed != tc.replayed {
					t.Errorf("replayed %v, want %v", out.Replayed, tc.replayed)
				}
				if waited < tc.waited {
					t.Errorf("retried after %s, before retry_after %s", waited, tc.waited)
				}
			})
		}
	})
}

// TestRetryStopsWithTheContext: a server that stays unavailable holds a
// post only as long as its context.
func TestRetryStopsWithTheContext(t *testing.T) {
	eachDB(t, nil, func(t *testing.T, s *server) {
		p := newFaultProxy(t, s.URL, func(int) fault { return unavailable })
		c := client.New(p.URL(), s.token(t, "alice", "read,write"),
			client.WithRetry(client.Retry{Attempts: 1000, Base: 5 * time.Millisecond, Max: 20 * time.Millisecond}))
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		_, err := c.Post(ctx, client.Ask("Is it up yet?"))
		if err == nil || ctx.Err() == nil {
			t.Fatalf("post returned %v before its context ended", err)
		}
		if posts, _ := p.counts(); posts < 2 || posts >= 1000 {
			t.Errorf("the proxy saw %d posts", posts)
		}
	})
}
