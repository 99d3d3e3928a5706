package main_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/internal/testkit"
	"parley/models"
)

// ack is one post the server acknowledged (201).
type ack struct {
	thread, message, body string
}

// posters run one agent per token against p, each posting up to max times
// (bodies unique by tag, agent and count)
// into its own thread (open, notes, answers from the next agent, and the
// creator's proposals), until stop closes. They return every acknowledged
// post; failures (the server killed or the database gone) are counted.
func posters(p *testkit.Proc, tag string, tokens []string, max int, pause time.Duration, stop <-chan struct{}) (acks []ack, failed int) {
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	client := &http.Client{Timeout: 5 * time.Second}
	for i, tok := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			thread := ""
			for n := 0; n < max; n++ {
				select {
				case <-stop:
					return
				case <-time.After(pause):
				}
				body := fmt.Sprintf("%s: agent %d post %d", tag, i, n)
				env := map[string]any{"kind": "ask", "body": body}
				switch {
				case thread == "":
				case n%7 == 3:
					env = map[string]any{"kind": "mark", "thread": thread, "state": "deferred", "body": body}
				case n%7 == 4:
					env = map[string]any{"kind": "mark", "thread": thread, "state": "open", "body": body}
				default:
					env = map[string]any{"kind": "note", "thread": thread, "body": body,
						"from": map[string]any{"extension": fmt.Sprintf("w%d", n%3)}}
				}
				status, out, err := call(client, "POST", p.URL("/api/v1/messages"), tok, env)
				mu.Lock()
				switch {
				case err == nil && status == http.StatusCreated:
					thread = testkit.Str(out, "thread", "id")
					acks = append(acks, ack{thread, testkit.Str(out, "message", "id"), body})
				case err == nil && status == http.StatusConflict:
					// a refused mark: an answer, not a failure
				default:
					failed++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return acks, failed
}

// checkStored verifies, on a running server over db, that every
// acknowledged post is stored exactly once with its body, that every
// thread's message_count matches its messages, and that every thread's
// events chain from state to state and end in its current state.
func checkStored(t *testing.T, db string, p *testkit.Proc, token string, acks []ack) {
	t.Helper()
	gdb, err := models.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := gdb.DB()
	defer sqlDB.Close()
	for _, a := range acks {
		var n int64
		id := strings.TrimPrefix(a.message, "msg_")
		if err := gdb.Raw("SELECT COUNT(*) FROM messages WHERE id = ? AND body = ?", id, a.body).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		var same int64
		gdb.Raw("SELECT COUNT(*) FROM messages WHERE body = ?", a.body).Scan(&same)
		if n != 1 || same != 1 {
			t.Fatalf("acknowledged %s (%q): stored %d times with its body, %d times in all", a.message, a.body, n, same)
		}
	}
	var mismatched int64
	gdb.Raw(`SELECT COUNT(*) FROM threads t WHERE message_count <> (SELECT COUNT(*) FROM messages m WHERE m.thread_id = t.id)`).Scan(&mismatched)
	if mismatched != 0 {
		t.Fatalf("%d threads count other messages than they hold: a half-written action", mismatched)
	}
	var threads []string
	for _, a := range acks {
		if !slices.Contains(threads, a.thread) {
			threads = append(threads, a.thread)
		}
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for _, th := range threads {
		_, view, err := call(client, "GET", p.URL("/api/v1/threads/"+th), token, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, evs, err := call(client, "GET", p.URL("/api/v1/events?limit=200&thread="+th), token, nil)
		if err != nil {
			t.Fatal(err)
		}
		state := ""
		for i, e := range testkit.Dig(evs, "events").([]any) {
			from := testkit.Str(e, "from_state")
			if i > 0 && from != state {
				t.Fatalf("%s event %d leaves %q, but the thread was %q", th, i, from, state)
			}
			state = testkit.Str(e, "to_state")
		}
		if want := testkit.Str(view, "thread", "state"); state != want {
			t.Fatalf("%s: events end in %q, thread is %q", th, state, want)
		}
	}
}

// TestKillUnderLoad kills the server with SIGKILL while agents post,
// restarts it on the same database, and checks that nothing acknowledged
// was lost or doubled and nothing half-written survived.
func TestKillUnderLoad(t *testing.T) {
	eachDB(t, func(t *testing.T, db string) {
		tokens := agentTokens(t, db, 6)
		p := startServe(t, db, nil)
		stop := make(chan struct{})
		var acks []ack
		var failed int
		done := make(chan struct{})
		go func() { acks, failed = posters(p, "before the kill", tokens, 100, 0, stop); close(done) }()
		// Kill mid-run: once the server has acknowledged a good number of
		// posts (its log says so), however loaded the machine is.
		for deadline := time.Now().Add(20 * time.Second); strings.Count(p.Stderr.String(), "status=201") < 40 && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		p.Kill()
		close(stop)
		<-done
		if len(acks) < 10 {
			t.Fatalf("only %d posts acknowledged before the kill: the load never ran", len(acks))
		}
		t.Logf("%d posts acknowledged, %d failed by the kill", len(acks), failed)
		restarted := startServe(t, db, nil)
		checkStored(t, db, restarted, tokens[0], acks)
		// The restarted server takes posts again.
		more, failedAfter := posters(restarted, "after the restart", tokens[:2], 3, 0, make(chan struct{}))
		if failedAfter != 0 || len(more) != 6 {
			t.Fatalf("after the restart: %d acknowledged, %d failed", len(more), failedAfter)
		}
	})
}
