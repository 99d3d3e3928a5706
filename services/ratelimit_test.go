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

// TestRateLimitsPerSession: a signed-in human's posts through the pages
// count against posts_per_minute as a token's do, per identity: a second
// session of the same human shares the budget, another human has their
// own, and so does the human's token. Sessions were never counted.
func TestRateLimitsPerSession(t *testing.T) {
	limits := services.DefaultLimits()
	limits.PostsPerMinute = 2
	var mu sync.Mutex
	clock := time.Date(2026, 11, 30, 12, 0, 10, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	eachWorldWith(t, services.Config{Limits: limits, Now: now}, func(t *testing.T, w *world) {
		mu.Lock()
		clock = time.Date(2026, 11, 30, 12, 0, 10, 0, time.UTC)
		mu.Unlock()
		session := func(name string) services.Caller {
			t.Helper()
			s, err := w.forum.SignIn(w.ctx, name, "correct horse battery", "10.0.0.1")
			if err != nil {
				t.Fatal(err)
			}
			back, err := w.forum.SessionCaller(w.ctx, s.Token)
			if err != nil {
				t.Fatal(err)
			}
			return back.Caller
		}
		token := w.human("ada") // also adds ada's account
		w.forum.AddUser(w.ctx, "bea", "correct horse battery")
		ada, ada2, bea := session("ada"), session("ada"), session("bea")
		ask := env{"kind": "ask", "body": "anyone?"}
		for i, who := range []services.Caller{ada, ada2} {
			if _, err := w.post(who, ask); err != nil {
				t.Fatalf("post %d refused: %v", i+1, err)
			}
		}
		_, err := w.post(ada, ask)
		r := expectRefusal(t, err, services.RateLimited)
		if r.RetryAfter != 50 || r.Status != 429 {
			t.Fatalf("retry_after %d status %d, want 50 s to the next minute and 429", r.RetryAfter, r.Status)
		}
		// Counted before the envelope is read, as a token's post is.
		_, err = w.forum.Post(w.ctx, ada2, []byte(`{"kind": "bogus"}`))
		expectRefusal(t, err, services.RateLimited)
		if _, err := w.post(bea, ask); err != nil {
			t.Fatalf("another human refused: %v", err)
		}
		if _, err := w.post(token, ask); err != nil {
			t.Fatalf("ada's token (metered by Admit, not here) refused: %v", err)
		}
		mu.Lock()
		clock = clock.Add(time.Minute)
		mu.Unlock()
		if _, err := w.post(ada, ask); err != nil {
			t.Fatalf("after a minute: %v", err)
		}
	})
}
