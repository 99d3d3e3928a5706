package services_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parley/models"
	"parley/services"
)

// TestRateLeasesHoldTheLimit: on PostgreSQL a process claims a token's
// units ahead (services/rate_leases.go), one at first, then twice as many
// each time. One process admits exactly the limit; two processes on one
// database never more than the limit, and at most a 32nd of it less, none
// less when the other served the token once; a secret that does not
// match spends nothing; a new minute starts afresh. On SQLite every request is counted alone,
// and the same holds.
func TestRateLeasesHoldTheLimit(t *testing.T) {
	const limit = 640 // leases of at most 20 units
	limits := services.DefaultLimits()
	limits.RequestsPerMinute = limit
	var mu sync.Mutex
	clock := time.Date(2026, 12, 7, 12, 0, 5, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	cfg := services.Config{Limits: limits, Now: now}
	eachWorldWith(t, cfg, func(t *testing.T, w *world) {
		mu.Lock()
		clock = time.Date(2026, 12, 7, 12, 0, 5, 0, time.UTC)
		mu.Unlock()
		tok, err := w.forum.CreateToken(w.ctx, services.TokenRequest{Handle: "a", Rights: []services.Right{services.RightRead}})
		if err != nil {
			t.Fatal(err)
		}
		claimed := func() (n int) {
			t.Helper()
			if err := w.db.Raw("SELECT COALESCE(SUM(count), 0) FROM rate_windows WHERE token_id = ? AND bucket = 'requests'", tok.Token.ID).Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		admit := func(f *services.Forum, secret string) error {
			_, err := f.Admit(w.ctx, secret, services.OpInbox)
			return err
		}

		// One process: the first request claims a lease, the next ones
		// write nothing until it is spent (PostgreSQL).
		for i := range 10 {
			if err := admit(w.forum, tok.Secret); err != nil {
				t.Fatalf("request %d: %v", i+1, err)
			}
		}
		want := 10
		if models.IsPostgresDB(w.db) {
			want = 1 + 2 + 4 + 8 // leases doubling from one unit, within a 32nd of the limit
		}
		if got := claimed(); got != want {
			t.Fatalf("after 10 requests the window holds %d units, want %d", got, want)
		}
		// A wrong secret for the same public id is refused and spends no unit.
		public := tok.Secret[:len(tok.Secret)-4] + "abcd"
		for range 5 {
			expectRefusal(t, admit(w.forum, public), services.TokenInvalid)
		}
		admitted := 10
		for admit(w.forum, tok.Secret) == nil {
			admitted++
		}
		if admitted != limit {
			t.Fatalf("one process admitted %d requests in a window, want exactly %d", admitted, limit)
		}
		expectRefusal(t, admit(w.forum, tok.Secret), services.RateLimited)

		// Two processes, the next minute: never more than the limit, and
		// at most a 32nd of it held back by the other's lease.
		mu.Lock()
		clock = clock.Add(time.Minute)
		mu.Unlock()
		other := services.New(w.db, cfg)
		var total atomic.Int64
		var wg sync.WaitGroup
		for _, f := range []*services.Forum{w.forum, other, w.forum, other} {
			wg.Go(func() {
				for admit(f, tok.Secret) == nil {
					total.Add(1)
				}
			})
		}
		wg.Wait()
		if n := total.Load(); n > limit || n < limit-limit/32 {
			t.Fatalf("two processes admitted %d requests in a window, want %d at most and %d at least", n, limit, limit-limit/32)
		}
		t.Logf("two processes admitted %d of %d", total.Load(), limit)

		// The next minute: one request through the other process, then
		// the rest through this one. A first lease is one unit, so the
		// other holds nothing back: exactly the limit.
		mu.Lock()
		clock = clock.Add(time.Minute)
		mu.Unlock()
		if err := admit(other, tok.Secret); err != nil {
			t.Fatal(err)
		}
		admitted = 1
		for admit(w.forum, tok.Secret) == nil {
			admitted++
		}
		if admitted != limit {
			t.Fatalf("one request through a second process, the rest through the first: %d admitted, want %d", admitted, limit)
		}
	})
}
