package services_test

import (
	"testing"
	"time"

	"parley/services"
)

// TestFlashIsReadOnce: what one page hands to the next is read once, only
// with the cookie of the session that stored it, and not after it expired.
func TestFlashIsReadOnce(t *testing.T) {
	clk := &clock{t: time.Now().UTC()}
	eachWorldWith(t, services.Config{Now: clk.now}, func(t *testing.T, w *world) {
		type note struct{ Secret string }
		if err := w.forum.SetFlash(w.ctx, "cookie-a", note{"prl_x"}); err != nil {
			t.Fatal(err)
		}
		var got note
		if ok, err := w.forum.TakeFlash(w.ctx, "cookie-b", &got); ok || err != nil {
			t.Fatalf("another session read the flash: %v %v", ok, err)
		}
		if ok, err := w.forum.TakeFlash(w.ctx, "cookie-a", &got); !ok || err != nil || got.Secret != "prl_x" {
			t.Fatalf("first read: %v %v %+v", ok, err, got)
		}
		if ok, err := w.forum.TakeFlash(w.ctx, "cookie-a", &got); ok || err != nil {
			t.Fatalf("second read: %v %v", ok, err)
		}
		// The secret is not in the database as written.
		if err := w.forum.SetFlash(w.ctx, "cookie-a", note{"prl_y"}); err != nil {
			t.Fatal(err)
		}
		var stored []byte
		if err := w.db.Raw("SELECT sealed FROM session_flashes").Row().Scan(&stored); err != nil || len(stored) == 0 {
			t.Fatalf("no sealed flash: %v", err)
		}
		for i := 0; i+5 <= len(stored); i++ {
			if string(stored[i:i+5]) == "prl_y" {
				t.Fatal("the flash is stored in the clear")
			}
		}
		clk.advance(6 * time.Minute)
		if ok, err := w.forum.TakeFlash(w.ctx, "cookie-a", &got); ok || err != nil {
			t.Fatalf("an expired flash was read: %v %v", ok, err)
		}
	})
}

// TestTokenLastUsed: authentication records a token's use, at most once a
// minute.
func TestTokenLastUsed(t *testing.T) {
	clk := &clock{t: time.Now().UTC().Truncate(time.Second)}
	eachWorldWith(t, services.Config{Now: clk.now}, func(t *testing.T, w *world) {
		tok, err := w.forum.CreateToken(w.ctx, services.TokenRequest{Handle: "scout", Rights: []services.Right{services.RightRead}})
		if err != nil {
			t.Fatal(err)
		}
		lastUsed := func() *time.Time {
			t.Helper()
			list, err := w.forum.ListTokens(w.ctx)
			if err != nil || len(list) != 1 {
				t.Fatalf("list: %v %v", list, err)
			}
			return list[0].LastUsedAt
		}
		if lastUsed() != nil {
			t.Fatal("a new token has a last use")
		}
		start := clk.now()
		for _, tc := range []struct {
			after time.Duration // since start
			want  time.Duration // last use, since start
		}{
			{0, 0},
			{30 * time.Second, 0}, // within the minute: no write
			{61 * time.Second, 61 * time.Second},
			{90 * time.Second, 61 * time.Second},
		} {
			clk.advance(start.Add(tc.after).Sub(clk.now()))
			w.auth(tok.Secret)
			if got := lastUsed(); got == nil || !got.Equal(start.Add(tc.want)) {
				t.Fatalf("after %v: last used %v, want %v", tc.after, got, start.Add(tc.want))
			}
		}
	})
}
