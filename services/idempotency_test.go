package services_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/services"
)

// answerJSON is a post's answer as the bindings send it, without the
// replayed flag: what a replay must repeat byte for byte.
func answerJSON(t *testing.T, p services.Posted) string {
	t.Helper()
	p.Replayed = false
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestIdempotentReplayAnswersTheFirstResult: a retry with the same key and
// envelope stores nothing and answers the first post's answer again, as
// it was then, even after the thread moved and though the guard would
// refuse the body (docs/protocol.md §3, errata 2).
func TestIdempotentReplayAnswersTheFirstResult(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		q := w.must(alice, env{"kind": "ask", "body": "Which port?"})
		e := env{"kind": "answer", "thread": q.Thread.ID, "body": "8443.", "idempotency_key": "k-1"}
		first := w.must(bob, e)
		if first.Replayed {
			t.Fatal("the first post says replayed")
		}
		w.must(alice, env{"kind": "decide", "thread": q.Thread.ID, "body": "8443 it is."}) // the thread moves on
		msgs, events := w.counts()

		// The same envelope, spelled differently: key order, the thread's
		// plain number, parley "1", an ignored server-set field.
		again := w.must(bob, env{"idempotency_key": "k-1", "parley": "1", "body": "8443.", "thread": strings.TrimPrefix(q.Thread.ID, "th_"), "kind": "answer", "id": "msg_999"})
		if !again.Replayed {
			t.Fatal("the retry is not replayed")
		}
		if got, want := answerJSON(t, again), answerJSON(t, first); got != want {
			t.Fatalf("replay answers\n%s\nnot the first answer\n%s", got, want)
		}
		if m, ev := w.counts(); m != msgs || ev != events {
			t.Fatalf("the replay stored %d messages, %d events", m-msgs, ev-events)
		}
		if got := w.thread(q.Thread.ID).Thread.State; got != services.Decided {
			t.Fatalf("thread state %s after the replay, want decided", got)
		}

		// The key is the token's: another token may use it for its own post.
		carol := w.agent("carol")
		if p := w.must(carol, env{"kind": "note", "thread": q.Thread.ID, "body": "Noted.", "idempotency_key": "k-1"}); p.Replayed {
			t.Fatal("another token's key replayed bob's post")
		}
	})
}

// TestIdempotencyKeyReused: the same key with another envelope is refused,
// naming the field; nothing is stored.
func TestIdempotencyKeyReused(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice := w.agent("alice")
		w.must(alice, env{"kind": "ask", "body": "Which port?", "idempotency_key": "k"})
		msgs, _ := w.counts()
		for name, e := range map[string]env{
			"another body":      {"kind": "ask", "body": "Which host?", "idempotency_key": "k"},
			"another kind":      {"kind": "assert", "body": "Which port?", "idempotency_key": "k"},
			"with an extension": {"kind": "ask", "body": "Which port?", "from": map[string]string{"extension": "w1"}, "idempotency_key": "k"},
			"with provenance":   {"kind": "ask", "body": "Which port?", "provenance": map[string]string{"model": "m"}, "idempotency_key": "k"},
		} {
			t.Run(name, func(t *testing.T) {
				r := expectRefusal(t, func() error { _, err := w.post(alice, e); return err }(), services.IdempotencyKeyReused, "idempotency_key")
				if r.Status != 409 {
					t.Fatalf("status %d, want 409", r.Status)
				}
			})
		}
		if m, _ := w.counts(); m != msgs {
			t.Fatalf("a reused key stored %d messages", m-msgs)
		}
	})
}

// TestIdempotencyKeyIsChecked: the key's form, and the header against the
// field.
func TestIdempotencyKeyIsChecked(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice := w.agent("alice")
		for name, key := range map[string]any{
			"empty": "", "too long": strings.Repeat("k", 65), "a space": "a b", "a slash": "a/b",
			"a number": 7, "null": nil, "non-ASCII": "clé",
		} {
			t.Run(name, func(t *testing.T) {
				w.refused(alice, env{"kind": "ask", "body": "x", "idempotency_key": key}, services.InvalidBody, "idempotency_key")
			})
		}
		w.must(alice, env{"kind": "ask", "body": "64 is fine", "idempotency_key": strings.Repeat("A", 64)})
		w.must(alice, env{"kind": "ask", "body": "all the signs", "idempotency_key": "aZ09._:-"})

		raw := []byte(`{"kind": "ask", "body": "header and field", "idempotency_key": "one"}`)
		_, err := w.forum.PostKeyed(w.ctx, alice, raw, "two")
		expectRefusal(t, err, services.InvalidBody, "idempotency_key")
		_, err = w.forum.PostKeyed(w.ctx, alice, []byte(`{"kind": "ask", "body": "bad header"}`), "a b")
		expectRefusal(t, err, services.InvalidBody, "idempotency_key")

		// Equal header and field are one key; the header alone is the field.
		first, err := w.forum.PostKeyed(w.ctx, alice, raw, "one")
		if err != nil || first.Replayed {
			t.Fatalf("header equal to the field: %+v %v", first, err)
		}
		again, err := w.forum.PostKeyed(w.ctx, alice, []byte(`{"kind": "ask", "body": "header and field"}`), "one")
		if err != nil || !again.Replayed || again.Message.ID != first.Message.ID {
			t.Fatalf("the header alone does not replay the field's post: %+v %v", again, err)
		}
	})
}

// TestIdempotencyKeysExpire: after 24 hours a key is free again; just
// before, it still replays.
func TestIdempotencyKeysExpire(t *testing.T) {
	start := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
	clk := &clock{t: start}
	eachWorldWith(t, services.Config{Now: clk.now}, func(t *testing.T, w *world) {
		clk.t = start
		alice := w.agent("alice")
		e := env{"kind": "ask", "body": "Which port?", "idempotency_key": "daily"}
		first := w.must(alice, e)
		clk.advance(24*time.Hour - time.Microsecond)
		if p := w.must(alice, e); !p.Replayed || p.Message.ID != first.Message.ID {
			t.Fatalf("just before 24 hours: %+v", p)
		}
		w.refused(alice, env{"kind": "ask", "body": "Another", "idempotency_key": "daily"}, services.IdempotencyKeyReused)
		clk.advance(time.Microsecond)
		second := w.must(alice, env{"kind": "ask", "body": "Which host?", "idempotency_key": "daily"})
		if second.Replayed || second.Message.ID == first.Message.ID {
			t.Fatalf("after 24 hours the key still binds: %+v", second)
		}
		// The key is bound to its new post now.
		if p := w.must(alice, env{"kind": "ask", "body": "Which host?", "idempotency_key": "daily"}); !p.Replayed || p.Message.ID != second.Message.ID {
			t.Fatalf("the renewed key does not replay its new post: %+v", p)
		}
		var rows int64
		w.db.Raw("SELECT COUNT(*) FROM idempotency_keys").Scan(&rows)
		if rows != 1 {
			t.Fatalf("%d key rows, want 1 (the expired one replaced)", rows)
		}
		// Keys nobody reuses are pruned once expired.
		w.must(alice, env{"kind": "ask", "body": "Old key", "idempotency_key": "old"})
		clk.advance(25 * time.Hour)
		w.must(alice, env{"kind": "ask", "body": "New key", "idempotency_key": "new"})
		var keys []string
		w.db.Raw("SELECT idempotency_key FROM idempotency_keys ORDER BY idempotency_key").Scan(&keys)
		if strings.Join(keys, ",") != "new" {
			t.Fatalf("keys after the prune: %v, want only new", keys)
		}
	})
}

// TestIdempotentRaceStoresOneMessage: 50 posts with one key at once store
// exactly one message; all answer its id, one as the post, 49 as replays.
func TestIdempotentRaceStoresOneMessage(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		q := w.must(alice, env{"kind": "ask", "body": "Which port?"})
		for _, e := range []env{
			{"kind": "ask", "body": "A new thread, fifty times.", "idempotency_key": "race-open"},
			{"kind": "answer", "thread": q.Thread.ID, "body": "8443, fifty times.", "idempotency_key": "race-reply"},
		} {
			before, _ := w.counts()
			const n = 50
			var wg sync.WaitGroup
			out := make([]services.Posted, n)
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() { out[i], errs[i] = w.post(bob, e) })
			}
			wg.Wait()
			replays := 0
			for i := range n {
				if errs[i] != nil {
					t.Fatalf("%s: post %d: %v", e["idempotency_key"], i, errs[i])
				}
				if out[i].Message.ID != out[0].Message.ID {
					t.Fatalf("%s: post %d answers %s, post 0 %s", e["idempotency_key"], i, out[i].Message.ID, out[0].Message.ID)
				}
				if out[i].Replayed {
					replays++
				}
			}
			if replays != n-1 {
				t.Fatalf("%s: %d replays, want %d", e["idempotency_key"], replays, n-1)
			}
			if after, _ := w.counts(); after != before+1 {
				t.Fatalf("%s: %d messages stored, want 1", e["idempotency_key"], after-before)
			}
		}
	})
}

// TestIdempotentReplaySurvivesARestart: the key is in the database, so a
// new Forum on it (a restarted or another server) replays.
func TestIdempotentReplaySurvivesARestart(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice := w.agent("alice")
		secret, err := w.forum.CreateToken(w.ctx, services.TokenRequest{Handle: "bob", Rights: []services.Right{services.RightRead, services.RightWrite}})
		if err != nil {
			t.Fatal(err)
		}
		bob := w.auth(secret.Secret)
		q := w.must(alice, env{"kind": "ask", "body": "Which port?"})
		e := env{"kind": "answer", "thread": q.Thread.ID, "body": "8443.", "idempotency_key": "restart"}
		first := w.must(bob, e)

		restarted := &world{t: t, db: w.db, forum: services.New(w.db, services.Config{}), ctx: w.ctx}
		bobAgain := restarted.auth(secret.Secret)
		again := restarted.must(bobAgain, e)
		if !again.Replayed || answerJSON(t, again) != answerJSON(t, first) {
			t.Fatalf("after a restart: %+v", again)
		}
		restarted.refused(bobAgain, env{"kind": "answer", "thread": q.Thread.ID, "body": "443.", "idempotency_key": "restart"}, services.IdempotencyKeyReused)
	})
}

// TestIdempotencyForHumanSessions: a browser session has no token; its
// keys are its identity's.
func TestIdempotencyForHumanSessions(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		ada := w.human("ada")
		ada.TokenID = 0 // as the web UI's session caller
		e := env{"kind": "ask", "body": "From the browser.", "idempotency_key": "web-1"}
		first := w.must(ada, e)
		again := w.must(ada, e)
		if !again.Replayed || again.Message.ID != first.Message.ID {
			t.Fatalf("a session's retry: %+v", again)
		}
		grace := w.human("grace")
		grace.TokenID = 0
		if p := w.must(grace, e); p.Replayed {
			t.Fatal("another human's key replayed ada's post")
		}
	})
}

// TestRefusedPostLeavesTheKeyFree: a refused post stores nothing, its key
// included, so the retry is checked afresh.
func TestRefusedPostLeavesTheKeyFree(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice := w.agent("alice")
		w.refused(alice, env{"kind": "note", "thread": "th_99", "body": "Too early.", "idempotency_key": "k"}, services.ThreadNotFound)
		if p := w.must(alice, env{"kind": "ask", "body": "Now a real one.", "idempotency_key": "k"}); p.Replayed {
			t.Fatal("a refused post bound its key")
		}
	})
}
