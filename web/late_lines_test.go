package web

import (
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"parley/internal/testkit"
)

// TestLateLinesWaitForTheAnswers: a parked answer's log line is not
// written while an answer is being written, and is once none is; a full
// queue (lateQueueMax) is written whatever is answering; flush writes what
// waits.
func TestLateLinesWaitForTheAnswers(t *testing.T) {
	var out testkit.SyncBuffer
	s := &server{log: slog.New(slog.NewTextHandler(&out, nil))}
	l := newLateLines(s)
	written := func() int { return strings.Count(out.String(), "request_id=") }
	waitWaiting := func() {
		for !l.waiting.Load() {
			runtime.Gosched()
		}
	}
	waitWritten := func() {
		l.mu.Lock()
		for l.running {
			l.idle.Wait()
		}
		l.mu.Unlock()
	}

	l.begin()
	l.add(lateLine{line: requestLine{id: "r1"}, status: 200})
	waitWaiting()
	if n := written(); n != 0 {
		t.Fatalf("%d lines written while an answer is being written", n)
	}
	l.end()
	waitWritten()
	if n := written(); n != 1 {
		t.Fatalf("%d lines written once no answer is, want 1", n)
	}

	l.begin()
	for range lateQueueMax {
		l.add(lateLine{line: requestLine{id: "full"}, status: 200})
	}
	waitWritten()
	if n := written(); n != 1+lateQueueMax {
		t.Fatalf("%d lines written with a full queue, want %d", n, 1+lateQueueMax)
	}

	l.add(lateLine{line: requestLine{id: "r2"}, status: 200})
	waitWaiting()
	l.flush()
	if n := written(); n != 2+lateQueueMax {
		t.Fatalf("%d lines written after flush, want %d", n, 2+lateQueueMax)
	}
	l.end()
}
