package main_test

import (
	"net/http"
	"testing"
	"time"

	"parley/internal/testkit"
)

// TestStreamSlotsAcrossProcesses: two `parley serve` on one database count
// a token's streams together (streams_per_token, 4), and a stream dropped
// at one process (RST, FIN, close) stops counting for the other at once
// (docs/protocol.md §13, errata 2), as seen over raw sockets; a refusal's
// retry_after is truthful. Last, a process is killed with its streams: the
// other admits new ones once the dead process's rows go stale, which its
// retry_after announces. The times are logged, not asserted.
func TestStreamSlotsAcrossProcesses(t *testing.T) {
	eachDB(t, func(t *testing.T, db string) {
		token := agentTokens(t, db, 1)[0]
		a := testkit.StartServe(t, binary, db, nil)
		b := testkit.StartServe(t, binary, db, nil)
		const limit = 4
		open := testkit.StreamSlots(t, []string{a.Addr, b.Addr}, token, limit)
		onA := 0
		for _, s := range open {
			if s.Addr == a.Addr {
				onA++
			}
		}
		// A process dies without a word: its streams' rows stay until
		// they are not refreshed for long enough.
		// The refusal's retry_after covers that: once it has passed, the
		// dead process's slots are free.
		a.Kill()
		start := time.Now()
		s := testkit.OpenRawStream(t, b.Addr, token)
		if s.Status == http.StatusTooManyRequests {
			t.Logf("after the kill: refused, retry_after %v s", s.RetryAfter())
			time.Sleep(time.Duration(s.RetryAfter() * float64(time.Second)))
		} else if s.Status != http.StatusOK {
			t.Fatalf("after the kill: %d %v", s.Status, s.Reply)
		} else {
			onA-- // the rows were stale already
		}
		for range onA {
			if s := testkit.OpenRawStream(t, b.Addr, token); s.Status != http.StatusOK {
				t.Fatalf("after the kill and retry_after: %d %v\n%s", s.Status, s.Reply, b.Tail())
			}
		}
		t.Logf("a process killed with %d streams: the other admitted as many after %s", onA, time.Since(start).Round(time.Millisecond))
	})
}
