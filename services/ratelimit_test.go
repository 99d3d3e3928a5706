package services_test

import (
	"sync"
	"testing"
	"time"

	"parley/services"
)

func TestRateLimitsPerToken(t *testing.T) {
	limits := services.DefaultLimits()
	limits.RequestsPerMinute, limits.PostsPerMinute = 5, 2
	var mu sync.Mutex
	clock := time.Date(2026, 11, 30, 12, 0, 10, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	eachWorldWith(t, services.Config{Limits: limits, Now: now}, func(t *testing.T, w *world) {
		mu.Lock()
		clock = time.Date(2026, 11, 30, 12, 0, 10, 0, time.UTC)
		mu.Unlock()
		a, _ := w.forum.CreateToken(w.ctx, services.TokenRequest{Handle: "a", Rights: []services.Right{services.RightWrite}})
		b, _ := w.forum.CreateToken(w.ctx, services.TokenRequest{Handle: "b", Rights: []services.Right{services.RightWrite}})

		for i := range 2 {
			if _, err := w.forum.Admit(w.ctx, a.Secret, "post"); err != nil {
				t.Fatalf("post %d refused: %v", i+1, err)
			}
		}
		_, err := w.forum.Admit(w.ctx, a.Secret, "post")
		r := expectRefusal(t, err, services.RateLimited)
		if r.RetryAfter != 50 || r.Status != 429 {
			t.Fatalf("retry_after %d status %d, want 50 s to the next minute and 429", r.RetryAfter, r.Status)
		}
		// Reads still pass until requests_per_minute (5) is spent: 3 used.
		for range 2 {
			if _, err := w.forum.Admit(w.ctx, a.Secret, "inbox"); err != nil {
				t.Fatalf("read refused: %v", err)
			}
		}
		_, err = w.forum.Admit(w.ctx, a.Secret, "inbox")
		expectRefusal(t, err, services.RateLimited)
		// Another token has its own budget.
		if _, err := w.forum.Admit(w.ctx, b.Secret, "post"); err != nil {
			t.Fatalf("token b refused: %v", err)
		}
		// A new minute, a new window.
		mu.Lock()
		clock = clock.Add(time.Minute)
		mu.Unlock()
		if _, err := w.forum.Admit(w.ctx, a.Secret, "post"); err != nil {
			t.Fatalf("after a minute: %v", err)
		}
		var rows int64
		w.db.Table("rate_windows").Where("token_id = ?", a.Token.ID).Count(&rows)
		if rows != 2 {
			t.Fatalf("%d windows kept for token a, want the current one per bucket", rows)
		}
		_, err = w.forum.Admit(w.ctx, "prl_nope_nope", "post")
		expectRefusal(t, err, services.TokenInvalid)
	})
}
