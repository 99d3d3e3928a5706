package services

import (
	"context"
	"sync"
	"time"
)

// hub tells the waiting reads and streams of this process that the log
// advanced (PARLEY.md §13). It is the one piece of state a Forum keeps in
// memory, and it holds no data: only "something new may be there", after
// which every waiter reads the database again with its own cursor. So
// nothing is lost if a signal is: a waiter that misses one finds the news
// on its next read, and waits are bounded (wait_max_seconds, the stream's
// periodic re-read). Across processes, PostgreSQL's LISTEN/NOTIFY carries
// the signal (see feed.go); on SQLite, which serves one process, writes
// signal the hub directly.
type hub struct {
	mu   sync.Mutex
	next chan struct{} // closed at the next advance
	pos  int64         // the highest position announced
}

func newHub() *hub { return &hub{next: make(chan struct{})} }

// wait returns a channel that is closed when the log next advances. Take
// it before reading the database, then wait on it: an advance between the
// read and the wait is not missed.
func (h *hub) wait() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.next
}

// advance wakes every waiter.
func (h *hub) advance(pos int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pos = max(h.pos, pos)
	close(h.next)
	h.next = make(chan struct{})
}

// sink collects the log positions one action takes, so that the action can
// announce the highest once it has committed.
type sink struct{ max int64 }

type sinkKey struct{}

// withSink gives ctx a sink that nextSeq fills.
func withSink(ctx context.Context) (context.Context, *sink) {
	s := &sink{}
	return context.WithValue(ctx, sinkKey{}, s), s
}

func (s *sink) add(pos int64) { s.max = max(s.max, pos) }

// published announces an action's positions once its transaction has
// committed: to this process's hub at once on SQLite; through the database
// to every process on PostgreSQL (the notifier batches them).
func (f *Forum) published(s *sink) {
	if s == nil || s.max == 0 {
		return
	}
	if f.notify == nil {
		f.hub.advance(s.max)
		return
	}
	select {
	case f.notify <- s.max:
	default: // the notifier is behind: it will send a higher position anyway
	}
}

// Changes tells a signed-in page that the forum changed (PARLEY.md §13:
// the web UI updates from the stream instead of polling): send gets the
// highest announced log position each time it rises, and 0 every
// streamHeartbeat as a heartbeat. It reads nothing from the database; the
// page asks for what it shows, with its version. It returns when send
// fails or ctx ends.
func (f *Forum) Changes(ctx context.Context, who Caller, send func(pos int64) error) error {
	if err := need(who, RightRead); err != nil {
		return err
	}
	beat := time.NewTicker(streamHeartbeat)
	defer beat.Stop()
	last := f.hub.position()
	for {
		signal := f.hub.wait()
		if pos := f.hub.position(); pos > last {
			last = pos
			if err := send(pos); err != nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-signal:
		case <-beat.C:
			if err := send(0); err != nil {
				return nil
			}
		}
	}
}

// position is the highest log position announced so far.
func (h *hub) position() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pos
}
