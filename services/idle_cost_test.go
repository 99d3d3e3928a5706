package services_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/services"
)

// statementCounter counts what a Forum asks its database through GORM:
// every statement, and the statements that re-check tokens.
type statementCounter struct {
	all, checks atomic.Int64
}

func watchStatements(t *testing.T, db *gorm.DB) *statementCounter {
	t.Helper()
	c := &statementCounter{}
	count := func(tx *gorm.DB) {
		c.all.Add(1)
		if sql := tx.Statement.SQL.String(); strings.Contains(sql, "tokens") && strings.Contains(sql, "revoked_at IS NULL") {
			c.checks.Add(1)
		}
	}
	cb := db.Callback()
	name := fmt.Sprintf("test:watch:%p", c)
	for i, err := range []error{
		cb.Create().After("*").Register(name, count), cb.Query().After("*").Register(name, count),
		cb.Update().After("*").Register(name, count), cb.Delete().After("*").Register(name, count),
		cb.Row().After("*").Register(name, count), cb.Raw().After("*").Register(name, count),
	} {
		if err != nil {
			t.Fatalf("callback %d: %v", i, err)
		}
	}
	return c
}

// TestIdleLongCallsShareOneCheck: waiting reads and streams with nothing
// happening cost the database one statement per process and heartbeat —
// the shared re-check of their tokens — not a read per call (issue 31,
// item 2). Before, each of these 45 calls read its token at every beat.
func TestIdleLongCallsShareOneCheck(t *testing.T) {
	eachWorldWith(t, services.Config{Heartbeat: shortBeat}, func(t *testing.T, w *world) {
		counter := watchStatements(t, w.db)
		since, err := w.forum.CurrentCursor(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(w.ctx)
		defer cancel()
		const waitTokens, waitsEach, streams = 5, 8, 5
		done := make(chan error, waitTokens*waitsEach+streams)
		var tokens []int64
		for i := range waitTokens {
			who := w.agent(fmt.Sprintf("idle-waiter-%d", i))
			tokens = append(tokens, who.TokenID)
			for range waitsEach {
				go func() {
					_, err := w.forum.Inbox(ctx, who, services.InboxQuery{Wait: "30", Since: since})
					done <- err
				}()
			}
		}
		var beats atomic.Int64   // the heartbeats of the first stream: the test's clock
		var started atomic.Int64 // streams past their first read (they hold their slot before it)
		for i := range streams {
			who := w.agent(fmt.Sprintf("idle-stream-%d", i))
			tokens = append(tokens, who.TokenID)
			go func() {
				var first atomic.Bool
				done <- w.forum.Stream(ctx, who, since, func(it services.StreamItem) error {
					if first.CompareAndSwap(false, true) {
						started.Add(1)
					}
					if i == 0 && it.Type == "" {
						beats.Add(1)
					}
					return nil
				})
			}()
		}
		held := 0
		defer func() { t.Logf("slots held: %d", held) }()
		until(t, "every call holds its slot, every stream past its first read", func() bool {
			if started.Load() < streams {
				return false
			}
			n := 0
			for i, id := range tokens {
				kind := "wait"
				if i >= waitTokens {
					kind = "stream"
				}
				n += slots(w, kind, "token_id", id)
			}
			held = n
			return n == waitTokens*waitsEach+streams
		})
		all0, checks0, beats0 := counter.all.Load(), counter.checks.Load(), beats.Load()
		const window = 5
		deadline := time.Now().Add(hang)
		for beats.Load() < beats0+window {
			if time.Now().After(deadline) {
				t.Fatalf("%d heartbeats in %s; want %d", beats.Load()-beats0, hang, window)
			}
			time.Sleep(shortBeat / 4)
		}
		all, checks := counter.all.Load()-all0, counter.checks.Load()-checks0
		// One shared check per beat (one more where the window's edges
		// fall), and a stream refresh (one UPDATE per process every couple
		// of seconds) may fall in the window too.
		if all > window+3 || checks > window+1 {
			t.Fatalf("%d statements, %d of them shared token checks, over %d heartbeats with 45 idle calls: want at most one per beat", all, checks, window)
		}
		cancel()
		for range waitTokens*waitsEach + streams {
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("an idle call ended with %v", err)
				}
			case <-time.After(hang):
				t.Fatalf("an idle call still runs %s after its context ended", hang)
			}
		}
	})
}

// TestLogAdvanced: the backstop's one query tells whether anything became
// final since its last look — a post, a state change, a confirmation —
// and nothing else wakes the waiters (issue 31, item 2).
func TestLogAdvanced(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		look := func(since int64) (int64, bool) {
			t.Helper()
			h, advanced, err := w.forum.LogAdvanced(w.ctx, since)
			if err != nil {
				t.Fatal(err)
			}
			return h, advanced
		}
		h, advanced := look(0)
		if advanced {
			t.Fatalf("an empty log advanced (horizon %d)", h)
		}
		alice, bob := w.agent("alice"), w.agent("bob")
		root := w.must(alice, env{"kind": "ask", "body": "Which port does the service listen on?", "to": map[string]string{"identity": bob.Identity}})
		h1, advanced := look(h)
		if !advanced {
			t.Fatalf("a new thread since horizon %d: not seen (horizon %d)", h, h1)
		}
		if _, again := look(h1); again {
			t.Fatal("nothing since the last look, yet the log advanced")
		}
		w.must(bob, env{"thread": root.Thread.ID, "kind": "note", "body": "Looking into it."})
		h2, advanced := look(h1)
		if !advanced {
			t.Fatal("a reply (no state change, no event) was not seen")
		}
		if _, again := look(h2); again {
			t.Fatal("the reply was seen twice")
		}
	})
}
