package services_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parley/models"
	"parley/services"
)

// TestStreamProbeReleasesDeadSlots: at streams_per_token, a new stream
// probes the token's streams of this process, and one whose client is gone
// (its write fails) gives up its slot at once (docs/protocol.md §13,
// errata 2). With every stream alive the refusal's retry_after is 1 s when
// they are all this process's, and covers a stream of another process
// until its record would go stale.
func TestStreamProbeReleasesDeadSlots(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		bob := w.agent("bob")
		limit := w.forum.Limits().StreamsPerToken
		// open starts a stream whose client is there until gone is set;
		// it answers once the stream was admitted, or its refusal.
		var ended sync.WaitGroup
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(func() { cancel(); ended.Wait() }) // before the database closes
		open := func(gone *atomic.Bool) error {
			started := make(chan error, 1)
			var once atomic.Bool
			ended.Add(1)
			go func() {
				defer ended.Done()
				err := w.forum.Stream(ctx, bob, "", func(services.StreamItem) error {
					if once.CompareAndSwap(false, true) {
						started <- nil
					}
					if gone.Load() {
						return errors.New("broken pipe")
					}
					return nil
				})
				if once.CompareAndSwap(false, true) {
					started <- err
				}
			}()
			return <-started
		}
		clients := make([]*atomic.Bool, limit)
		for i := range clients {
			clients[i] = &atomic.Bool{}
			if err := open(clients[i]); err != nil {
				t.Fatalf("stream %d: %v", i+1, err)
			}
		}
		var r *services.Refusal
		if err := open(&atomic.Bool{}); !errors.As(err, &r) || r.Reason != services.RateLimited || r.RetryAfter != 1 {
			t.Fatalf("stream %d with %d alive: %v (retry_after %v)", limit+1, limit, err, r)
		}
		// A client goes away; nothing is written to it until the probe.
		clients[0].Store(true)
		start := time.Now()
		if err := open(&atomic.Bool{}); err != nil {
			t.Fatalf("after a client went away: %v", err)
		}
		t.Logf("a stream whose client was gone released by the probe; the new one admitted in %s", time.Since(start).Round(time.Millisecond))
		// A stream of another process (a record refreshed just now).
		var n int64
		w.db.Model(&models.Stream{}).Count(&n)
		if int(n) != limit {
			t.Fatalf("%d stream records, want %d", n, limit)
		}
		w.db.Model(&models.Stream{}).Where("id = (SELECT MIN(id) FROM streams)").Delete(&models.Stream{})
		now := time.Now().UTC()
		w.db.Create(&models.Stream{TokenID: bob.TokenID, OpenedAt: now, SeenAt: now})
		if err := open(&atomic.Bool{}); !errors.As(err, &r) || r.RetryAfter < 5 || r.RetryAfter > 6 {
			t.Fatalf("with a stream of another process: %v (retry_after %v)", err, r)
		}
		t.Logf("with a stream of another process refreshed just now: retry_after %d s", r.RetryAfter)
	})
}
