package web

import (
	"runtime"
	"sync"
	"time"

	"parley/services"
)

// lateLines writes the log lines of parked calls' answers after the
// answers (inbox_parked.go). One ask can wake ten thousand waiting calls at
// once; their lines, formatted by slog, were a fifth of the wake's CPU
// profile, spent before each answer went out. Now an answered call queues
// its line and one goroutine writes the queue, yielding between small
// batches, so the lines are written once the answers are — each with the
// status, reason and duration it had when it was answered, in the order
// of the answers. The metrics count each call when its line is written.
//
// Scaling: the queue holds this process's own lines, for as long as it
// takes to write them.
type lateLines struct {
	s       *server
	mu      sync.Mutex
	queue   []lateLine
	running bool
	idle    sync.Cond // signalled when the queue is written
}

// lateLine is one answer's line, as writeLine takes it.
type lateLine struct {
	line   requestLine
	status int
	r      *services.Refusal
	took   time.Duration
}

// lateBatch is how many lines the writer writes before it yields.
const lateBatch = 32

func newLateLines(s *server) *lateLines {
	l := &lateLines{s: s}
	l.idle.L = &l.mu
	return l
}

// add queues a line.
func (l *lateLines) add(line lateLine) {
	l.mu.Lock()
	l.queue = append(l.queue, line)
	if !l.running {
		l.running = true
		go l.write()
	}
	l.mu.Unlock()
}

func (l *lateLines) write() {
	for {
		l.mu.Lock()
		batch := l.queue
		if len(batch) > lateBatch {
			batch = batch[:lateBatch:lateBatch]
			l.queue = l.queue[lateBatch:]
		} else {
			l.queue = nil
		}
		if len(batch) == 0 {
			l.running = false
			l.idle.Broadcast()
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		for _, x := range batch {
			l.s.writeLine(x.line, x.status, x.r, x.took, true)
		}
		// Behind the answering goroutines that are ready to run.
		runtime.Gosched()
	}
}

// flush waits until every queued line is written.
func (l *lateLines) flush() {
	l.mu.Lock()
	for l.running {
		l.idle.Wait()
	}
	l.mu.Unlock()
}
