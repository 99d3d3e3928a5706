package web

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"parley/services"
)

// lateLines writes the log lines of parked calls' answers after the
// answers (inbox_parked.go). One ask can wake ten thousand waiting calls at
// once; their lines, formatted by slog, were a fifth of the wake's CPU
// profile, spent before each answer went out. Now an answered call queues
// its line and one goroutine writes the queue in small batches, each only
// while no answer is being written (answering), so the lines are written
// once the answers are — each with the status, reason and duration it had
// when it was answered, in the order of the answers. A queue of
// lateQueueMax lines is written whatever is answering, so that a server
// that never stops answering still logs. The metrics count each call when
// its line is written.
//
// Scaling: the queue holds this process's own lines, for as long as it
// takes to write them.
type lateLines struct {
	s       *server
	mu      sync.Mutex
	queue   []lateLine
	running bool
	idle    sync.Cond // signalled when the queue is written
	quiet   sync.Cond // signalled when answering falls to 0, or the queue must be written

	answering atomic.Int64 // answers being written (begin, end)
	waiting   atomic.Bool  // the writer waits on quiet
	flushing  bool
}

// lateLine is one answer's line, as writeLine takes it.
type lateLine struct {
	line   requestLine
	status int
	r      *services.Refusal
	took   time.Duration
}

// lateBatch is how many lines the writer writes before it yields and
// looks again whether answers are being written; lateQueueMax is the
// queue it writes even while they are.
const (
	lateBatch    = 32
	lateQueueMax = 16384
)

func newLateLines(s *server) *lateLines {
	l := &lateLines{s: s}
	l.idle.L, l.quiet.L = &l.mu, &l.mu
	return l
}

// begin and end bracket the writing of an answer.
func (l *lateLines) begin() { l.answering.Add(1) }

func (l *lateLines) end() {
	if l.answering.Add(-1) == 0 && l.waiting.Load() {
		l.mu.Lock()
		l.quiet.Broadcast()
		l.mu.Unlock()
	}
}

// add queues a line.
func (l *lateLines) add(line lateLine) {
	l.mu.Lock()
	l.queue = append(l.queue, line)
	if len(l.queue) >= lateQueueMax {
		l.quiet.Broadcast()
	}
	if !l.running {
		l.running = true
		go l.write()
	}
	l.mu.Unlock()
}

func (l *lateLines) write() {
	for {
		l.mu.Lock()
		// waiting is set before answering is read: an end that brings it
		// to 0 after this read sees waiting, and wakes the writer.
		l.waiting.Store(true)
		for len(l.queue) > 0 && l.answering.Load() > 0 && !l.flushing && len(l.queue) < lateQueueMax {
			l.quiet.Wait()
		}
		l.waiting.Store(false)
		// A batch while nothing answers; all of a full queue, or of one
		// being flushed.
		n := len(l.queue)
		if n < lateQueueMax && !l.flushing {
			n = min(n, lateBatch)
		}
		batch := l.queue[:n:n]
		l.queue = l.queue[n:]
		if len(l.queue) == 0 {
			l.queue = nil
		}
		if n == 0 {
			l.running = false
			l.idle.Broadcast()
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		for i, x := range batch {
			l.s.writeLine(x.line, x.status, x.r, x.took, true)
			if i%lateBatch == lateBatch-1 {
				runtime.Gosched() // behind the answering goroutines ready to run
			}
		}
		runtime.Gosched()
	}
}

// flush waits until every queued line is written.
func (l *lateLines) flush() {
	l.mu.Lock()
	l.flushing = true
	l.quiet.Broadcast()
	for l.running {
		l.idle.Wait()
	}
	l.flushing = false
	l.mu.Unlock()
}
