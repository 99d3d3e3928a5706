package services

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"gorm.io/gorm"
)

// hub tells the waiting reads and streams of this process that the log
// advanced (docs/protocol.md §13). It is the one piece of state a Forum keeps in
// memory, and it holds no data: only "something new may be there", after
// which every waiter reads the database again with its own cursor. So
// nothing is lost if a signal is: a waiter that misses one finds the news
// on its next read, and waits are bounded (wait_max_seconds, the stream's
// periodic re-read). Writes signal the hub of their own process directly;
// across processes, PostgreSQL's LISTEN/NOTIFY carries the signal (see
// store_notify.go), and on SQLite a watcher of the file (store_sqlite_watch.go).
type hub struct {
	mu    sync.Mutex
	next  chan struct{}                // closed at the next advance
	turns map[turnWaiter]chan struct{} // per identity and view: closed when a turn may have opened for it
	mods  map[turnWaiter]bool          // waiters in turns that are humans or lock holders
	pos   int64                        // the highest position announced

	// The waiters that hold no goroutine (onAdvance, onTurn): called once,
	// at the advance that would have closed their channel.
	calls     uint64 // the last call's id
	nextCalls map[uint64]func()
	turnCalls map[turnWaiter]map[uint64]func()
	own       ownWrites // on SQLite: this process's positions, for the watcher

	// The advances so far, and those that may have opened a turn for
	// someone (any audience but audienceNone): a read between two equal counts
	// missed nothing (waitNews). Counted under mu, before the waiters of
	// the advance are collected.
	advances, turnAdvances atomic.Uint64

	registrations atomic.Int64 // onAdvance and onTurn calls, for tests

	// gather, when set, is held while an advance calls its waiters, so
	// that the rounds they join start once all have joined (fanout.hold).
	gather *fanout
}

// waitNews is how a waiting call hears of news: on registers wake, called
// once at an advance that may concern the call (cancel forgets it); count
// counts at least every such advance so far.
type waitNews struct {
	on    func(wake func()) (cancel func())
	count func() uint64
}

// eventNews is the news of every advance, for the waiting events.
func (h *hub) eventNews() waitNews {
	return waitNews{on: h.onAdvance, count: h.advances.Load}
}

// turnNews is the news of the turns of who's inbox, or of its addressed
// view (onTurn), counted by every advance that may have opened a turn.
func (h *hub) turnNews(who Caller, addressed bool) waitNews {
	return waitNews{on: func(wake func()) func() { return h.onTurn(who, addressed, wake) }, count: h.turnAdvances.Load}
}

// The audiences an advance names besides identities.
const (
	audienceAnyone     = Anyone        // a turn any identity may take, or unknown news
	audienceModerators = "@moderators" // an escalation: humans and lock holders
	audienceNone       = "-"           // a write that opened no turn: no inbox (audienceOrNone)
)

func newHub() *hub {
	return &hub{next: make(chan struct{}), turns: map[turnWaiter]chan struct{}{}, mods: map[turnWaiter]bool{},
		nextCalls: map[uint64]func(){}, turnCalls: map[turnWaiter]map[uint64]func(){}}
}

// wait returns a channel that is closed when the log next advances. Take
// it before reading the database, then wait on it: an advance between the
// read and the wait is not missed.
func (h *hub) wait() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.next
}

// turnWaiter is whom a waiting inbox waits for: an identity, and whether
// it reads the addressed view (docs/protocol.md §8, errata 2), which a
// turn awaiting anyone cannot change.
type turnWaiter struct {
	identity  string
	addressed bool
}

// waitTurn is wait for an inbox: its channel is closed only when a turn
// may have opened for who — addressed to its identity or, unless the inbox
// is the addressed view, to anyone; or an escalation when who is a human
// or a lock holder. A thousand waiting inboxes are not all woken by every
// post, and an addressed inbox sleeps through asks to anyone. (Waiters of
// one identity and view share a channel: one closed for another
// extension's turn costs a re-read.)
func (h *hub) waitTurn(who Caller, addressed bool) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := turnWaiter{who.Identity, addressed}
	ch, ok := h.turns[k]
	if !ok {
		ch = make(chan struct{})
		h.turns[k] = ch
	}
	if who.Human() || who.LockHolder() {
		h.mods[k] = true
	}
	return ch
}

// advance wakes the waiters that an advance to pos concerns: every event
// waiter and stream, and the inboxes of the audience (identities, anyone —
// but not the addressed views —, moderators); an empty audience is news
// for everyone. The waiters that hold no goroutine are called after the
// hub's lock is let go, from this goroutine.
func (h *hub) advance(pos int64, audience ...string) {
	calls := h.woken(pos, audience)
	if h.gather != nil {
		h.gather.hold()
		defer h.gather.let()
	}
	for _, fn := range calls {
		fn()
	}
}

// woken is advance under the hub's lock: it closes the channels and
// answers the calls to make.
func (h *hub) woken(pos int64, audience []string) (calls []func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.advances.Add(1)
	if len(audience) != 1 || audience[0] != audienceNone {
		h.turnAdvances.Add(1)
	}
	h.pos = max(h.pos, pos)
	close(h.next)
	h.next = make(chan struct{})
	for id, fn := range h.nextCalls {
		calls = append(calls, fn)
		delete(h.nextCalls, id)
	}
	wake := func(k turnWaiter) {
		if ch, ok := h.turns[k]; ok {
			close(ch)
			delete(h.turns, k)
		}
		for _, fn := range h.turnCalls[k] {
			calls = append(calls, fn)
		}
		delete(h.turnCalls, k)
		delete(h.mods, k)
	}
	keys := func(addressedToo bool) []turnWaiter {
		var ks []turnWaiter
		for k := range h.turns {
			if addressedToo || !k.addressed {
				ks = append(ks, k)
			}
		}
		for k := range h.turnCalls {
			if _, dup := h.turns[k]; !dup && (addressedToo || !k.addressed) {
				ks = append(ks, k)
			}
		}
		return ks
	}
	if len(audience) == 0 {
		for _, k := range keys(true) {
			wake(k)
		}
		return calls
	}
	for _, a := range audience {
		switch a {
		case audienceAnyone:
			for _, k := range keys(false) {
				wake(k)
			}
		case audienceModerators:
			for k := range h.mods {
				wake(k)
			}
		default:
			wake(turnWaiter{a, false})
			wake(turnWaiter{a, true})
		}
	}
	return calls
}

// onAdvance is wait for a waiter that holds no goroutine: fn is called
// once, at the next advance (from the advancing goroutine: it must not
// block); cancel forgets it.
func (h *hub) onAdvance(fn func()) (cancel func()) {
	h.registrations.Add(1)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls++
	id := h.calls
	h.nextCalls[id] = fn
	return func() {
		h.mu.Lock()
		delete(h.nextCalls, id)
		h.mu.Unlock()
	}
}

// onTurn is waitTurn for a waiter that holds no goroutine: fn is called
// once, at the advance that would close waitTurn's channel; cancel
// forgets it.
func (h *hub) onTurn(who Caller, addressed bool, fn func()) (cancel func()) {
	h.registrations.Add(1)
	h.mu.Lock()
	defer h.mu.Unlock()
	k := turnWaiter{who.Identity, addressed}
	h.calls++
	id := h.calls
	fns := h.turnCalls[k]
	if fns == nil {
		fns = map[uint64]func(){}
		h.turnCalls[k] = fns
	}
	fns[id] = fn
	if who.Human() || who.LockHolder() {
		h.mods[k] = true
	}
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if fns := h.turnCalls[k]; fns != nil {
			delete(fns, id)
			if len(fns) == 0 {
				delete(h.turnCalls, k)
			}
		}
	}
}

// sink collects what one action writes to the log — its highest position
// and the identities for whom it opened a turn — so that the action can
// announce it once it has committed.
type sink struct {
	max      int64
	min      int64 // the lowest position, for the SQLite watcher
	audience []string
	early    earlyPosition // see lockThreadPG
	ahead    *parentAhead  // see readParentAhead
	chain    questionChain // see takeQuestionChain
}

type sinkKey struct{}

// withSink gives ctx a sink that nextSeq and turnOpened fill.
func withSink(ctx context.Context) (context.Context, *sink) {
	s := &sink{}
	return context.WithValue(ctx, sinkKey{}, s), s
}

func (s *sink) add(pos int64) {
	s.max = max(s.max, pos)
	if s.min == 0 || pos < s.min {
		s.min = pos
	}
}

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
// committed: to this process's hub at once on SQLite (other processes'
// watchers find it in the file); through the database to every process on
// PostgreSQL (the notifier batches them).
func (f *Forum) published(s *sink) {
	if s == nil || s.max == 0 {
		return
	}
	if f.notify == nil {
		f.hub.own.note(s.min, s.max)
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
		return []string{audienceNone}
	}
	return s.audience
}

// notice is one announcement for the notifier.
type notice struct {
	pos      int64
	audience []string
}

// position is the highest log position announced so far.
func (h *hub) position() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pos
}
