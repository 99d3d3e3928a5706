package services

import (
	"context"
	"slices"
	"sync"
	"time"

	"gorm.io/gorm"
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
	mu    sync.Mutex
	next  chan struct{}            // closed at the next advance
	turns map[string]chan struct{} // per identity: closed when a turn may have opened for it
	mods  map[string]bool          // identities in turns that are humans or lock holders
	pos   int64                    // the highest position announced
}

// The audiences an advance names besides identities.
const (
	audienceAnyone     = "*"           // a turn any identity may take, or unknown news
	audienceModerators = "@moderators" // an escalation: humans and lock holders
)

func newHub() *hub {
	return &hub{next: make(chan struct{}), turns: map[string]chan struct{}{}, mods: map[string]bool{}}
}

// wait returns a channel that is closed when the log next advances. Take
// it before reading the database, then wait on it: an advance between the
// read and the wait is not missed.
func (h *hub) wait() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.next
}

// waitTurn is wait for an inbox: its channel is closed only when a turn
// may have opened for who — addressed to its identity or to anyone, or an
// escalation when who is a human or a lock holder. A thousand waiting
// inboxes are not all woken by every post. (Waiters of one identity share
// a channel: one closed for another extension's turn costs a re-read.)
func (h *hub) waitTurn(who Caller) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch, ok := h.turns[who.Identity]
	if !ok {
		ch = make(chan struct{})
		h.turns[who.Identity] = ch
	}
	if who.Human() || who.LockHolder() {
		h.mods[who.Identity] = true
	}
	return ch
}

// advance wakes the waiters that an advance to pos concerns: every event
// waiter and stream, and the inboxes of the audience (identities, anyone,
// moderators); an empty audience is news for everyone.
func (h *hub) advance(pos int64, audience ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pos = max(h.pos, pos)
	close(h.next)
	h.next = make(chan struct{})
	wake := func(id string) {
		if ch, ok := h.turns[id]; ok {
			close(ch)
			delete(h.turns, id)
			delete(h.mods, id)
		}
	}
	if len(audience) == 0 || slices.Contains(audience, audienceAnyone) {
		for id := range h.turns {
			wake(id)
		}
		return
	}
	for _, a := range audience {
		if a == audienceModerators {
			for id := range h.mods {
				wake(id)
			}
			continue
		}
		wake(a)
	}
}

// sink collects what one action writes to the log — its highest position
// and the identities for whom it opened a turn — so that the action can
// announce it once it has committed.
type sink struct {
	max      int64
	audience []string
	early    earlyPosition // see lockThreadPG
}

type sinkKey struct{}

// withSink gives ctx a sink that nextSeq and turnOpened fill.
func withSink(ctx context.Context) (context.Context, *sink) {
	s := &sink{}
	return context.WithValue(ctx, sinkKey{}, s), s
}

func (s *sink) add(pos int64) { s.max = max(s.max, pos) }

// turnOpened notes, in the action's sink, whose inbox a new turn reaches:
// the awaited identity ("*" for anyone), and humans and lock holders for an
// escalation.
func turnOpened(tx *gorm.DB, audience ...string) {
	if s, ok := tx.Statement.Context.Value(sinkKey{}).(*sink); ok {
		for _, a := range audience {
			if a != "" && !slices.Contains(s.audience, a) {
				s.audience = append(s.audience, a)
			}
		}
	}
}

// published announces an action's positions once its transaction has
// committed: to this process's hub at once on SQLite; through the database
// to every process on PostgreSQL (the notifier batches them).
func (f *Forum) published(s *sink) {
	if s == nil || s.max == 0 {
		return
	}
	if f.notify == nil {
		f.hub.advance(s.max, s.audienceOrNone()...)
		return
	}
	select {
	case f.notify <- notice{pos: s.max, audience: s.audienceOrNone()}:
	default: // the notifier is behind: it will send a higher position anyway
	}
}

// audienceOrNone is the sink's audience; a write that opened no turn wakes
// no inbox, which "-" says (an empty audience would wake them all).
func (s *sink) audienceOrNone() []string {
	if len(s.audience) == 0 {
		return []string{"-"}
	}
	return s.audience
}

// notice is one announcement for the notifier.
type notice struct {
	pos      int64
	audience []string
}

// Changes tells a signed-in page that the forum changed (PARLEY.md §13:
// the web UI updates from the stream instead of polling): send gets the
// highest announced log position each time it rises, and 0 as a
// heartbeat: at once, when Changes listens (so that a caller that waits
// for it before it answers misses no later advance), then every
// streamHeartbeat. It reads nothing from the database; the page asks for
// what it shows, with its version. It returns when send fails or ctx
// ends.
func (f *Forum) Changes(ctx context.Context, who Caller, send func(pos int64) error) error {
	if err := need(who, RightRead); err != nil {
		return err
	}
	beat := time.NewTicker(streamHeartbeat)
	defer beat.Stop()
	last := f.hub.position()
	if err := send(0); err != nil {
		return nil
	}
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
