package services

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultQueryTimeout bounds each database round of a waiting read, whose
// request as a whole may last wait_max_seconds.
const DefaultQueryTimeout = 5 * time.Second

// waiting runs read — one query of the database with the caller's cursor,
// reporting whether it found anything — and, while it finds nothing, waits
// for news that may concern it (news registers wake with the hub) and
// reads again, until wait has passed or the caller is gone. Between reads
// it holds no database connection: it waits on the hub only. Each read
// bounds its queries by the query timeout itself, so a frozen database
// still answers unavailable in time (read is given the call's ctx: a read
// served by its process's shared round, bounded by the round's deadline,
// so takes no timer of its own).
//
// Once its first read found nothing, the call holds a slot of
// waits_per_token for the time it may still wait (openWait; beyond the cap
// it is refused, rate_limited), released when it returns; and at each
// heartbeat its process re-checks the tokens of all its waiting calls in
// one query (store_revocations.go), and the call answers token_invalid
// once its token is revoked. The binding ends ctx when the client goes away, which
// frees the slot at once.
func (f *Forum) waiting(ctx context.Context, who Caller, wait time.Duration, news waitNews, read func(context.Context) (bool, error)) error {
	done := make(chan error, 1)
	f.waitThen(ctx, who, wait, news, read, nil, func(err error) { done <- err })
	return <-done
}

// laterRead is a read that a call woken by news joins rather than makes:
// its process reads once for every such call (inbox_fanout.go) and calls
// then with the call's result, from the goroutine that read (then must not
// block). When the read serves the call something, the call will answer:
// the read may release its slot for it beforehand, with the others', by
// taking its id from slot. false: the call cannot be served that way now,
// and reads itself.
type laterRead func(ctx context.Context, slot *atomic.Int64, then func(found bool, err error)) bool

// waitThen is waiting for a binding that need not hold a goroutine while
// the call waits (web/inbox_parked.go): answer is called once, with what
// waiting would return — before waitThen returns when the first read ends
// the call, else later, from the goroutine that read last. Between reads
// the call is only registrations: news's for the hub, a timer for its
// wait, one for ctx's end and one for its token's revocation; the first
// of them to fire starts the next read in a goroutine of its own, or ends
// the call. A read is never cut short: an end that comes during one is
// kept until it returns, and news that comes during one makes another.
//
// A call woken by news, with later, holds no goroutine until its read is
// done: the thousands of calls one ask wakes join their process's read,
// which releases the slots of those it serves in one statement, and only
// then each starts the goroutine that answers it. A goroutine started for
// each at the wake-up, to wait for that read and then for its slot's
// release, made thousands of runnable goroutines that the read's and the
// releases' own goroutines queued behind at every step (issue 31, item 3).
//
// A registration with the hub is kept until it fires, and a call that a
// wake-up starts reading registers again only when that read finds
// nothing (after). So the thousands of calls that one ask wakes, and that
// the round after it answers, neither register again nor cancel: each a
// taking of the hub's lock, which they all contend for at once.
func (f *Forum) waitThen(ctx context.Context, who Caller, wait time.Duration, news waitNews, read func(context.Context) (bool, error), later laterRead, answer func(error)) {
	c := &waitCall{f: f, ctx: ctx, who: who, give: time.Now().Add(wait), waits: wait > 0, news: news, read: read, later: later, answer: answer, reading: true}
	c.round(false)
}

// waitCall is one call of waitThen.
type waitCall struct {
	f      *Forum
	ctx    context.Context
	who    Caller
	give   time.Time
	waits  bool // it may wait at all: else its one read needs no registration
	news   waitNews
	read   func(context.Context) (bool, error)
	later  laterRead
	answer func(error)

	opened  bool         // the slot and the watches are held (after the first read that found nothing)
	release []func()     // what ends the watches
	slot    atomic.Int64 // the slot's row while it is held and not yet released (openWait)

	mu         sync.Mutex
	reading    bool   // a read runs, or the call is ending: no other may start
	woken      bool   // news came during the read
	ended      bool   // end came: answer now or, during a read, after it
	endErr     error  // the end's answer: nil (the wait passed, the client went) or revokedRefusal
	listening  bool   // a registration with the hub stands (wake: it fired and is gone)
	cancelNews func() // the last registration with the hub
}

// round reads, and reads again while news came during the read; then the
// call either ends or waits on its registrations. A read stands on a
// registration with the hub made before it, except the first read after a
// wake (woke), which registers only if it finds nothing and then reads
// again if news.count moved meanwhile (any turn anywhere: at most once,
// since the read after it stands on the registration); and the one read
// of a call that may not wait, which needs none.
func (c *waitCall) round(woke bool) {
	for {
		c.mu.Lock()
		c.woken = false
		standing := c.listening
		c.mu.Unlock()
		if !standing && !woke && c.waits {
			c.listen() // before the read: news during it is not missed
			standing = true
		}
		woke = false
		seen := c.news.count()
		found, err := c.read(c.ctx)
		if !c.after(seen, standing, found, err) {
			return
		}
	}
}

// after follows a read, made with news.count at seen and standing on a
// registration or not: the call ends, or waits on its registrations, or
// (true) reads again.
func (c *waitCall) after(seen uint64, standing, found bool, err error) (again bool) {
	left := time.Until(c.give)
	if err != nil || found || left <= 0 {
		c.finish(err)
		return false
	}
	if !standing {
		c.listen()
		if c.news.count() != seen {
			return true // news during the read, perhaps before the registration
		}
	}
	if !c.opened {
		c.opened = true
		slot, err := c.f.openWait(c.ctx, c.who, left)
		if err != nil {
			c.finish(err)
			return false
		}
		c.slot.Store(slot)
		_, unwatch := c.f.watchTokenThen(c.who, func() { c.end(revokedRefusal()) })
		timer := time.AfterFunc(left, func() { c.end(nil) })
		stopCtx := context.AfterFunc(c.ctx, func() { c.end(nil) })
		c.release = []func(){func() { timer.Stop() }, func() { stopCtx() }, unwatch}
	}
	c.mu.Lock()
	switch {
	case c.ended:
		c.mu.Unlock()
		c.finish(c.endErr)
		return false
	case c.woken:
		c.mu.Unlock()
		return true
	}
	c.reading = false
	c.mu.Unlock()
	return false
}

// listen registers the call with the hub, unless its last registration
// stands.
func (c *waitCall) listen() {
	c.mu.Lock()
	if c.listening {
		c.mu.Unlock()
		return
	}
	c.listening = true // before: a registration may fire at once
	c.mu.Unlock()
	cancel := c.news.on(c.wake)
	c.mu.Lock()
	c.cancelNews = cancel
	c.mu.Unlock()
}

// wake is the hub's call: news that may concern the call, whose
// registration is then gone. It starts a read unless one runs (which then
// reads again) or the call has ended: the read its process makes for all
// the calls woken (later), else one in a goroutine of its own.
func (c *waitCall) wake() {
	c.mu.Lock()
	c.listening = false
	switch {
	case c.ended:
		c.mu.Unlock()
		return
	case c.reading:
		c.woken = true
		c.mu.Unlock()
		return
	}
	c.reading, c.woken = true, false
	c.mu.Unlock()
	seen := c.news.count()
	if c.later == nil || !c.later(c.ctx, &c.slot, func(found bool, err error) { c.afterLater(seen, found, err) }) {
		go c.round(true)
	}
}

// afterLater goes on from a read the call joined, as round does from its
// own, called from the goroutine that read. A call served something
// answers there and then: its slot is released already and its
// registrations let go without waiting, and the binding's answer must not
// block (InboxThen) — so the thousands of calls one ask wakes are
// answered by the round's few goroutines, not a goroutine each. Any other
// goes on in a goroutine of its own, which may read again.
func (c *waitCall) afterLater(seen uint64, found bool, err error) {
	if found && err == nil {
		c.after(seen, false, found, err) // ends the call: it never reads again
		return
	}
	go func() {
		if c.after(seen, false, found, err) {
			c.round(false)
		}
	}()
}

// end ends the call with err: at once while it waits, after the read
// while one runs. The first end counts.
func (c *waitCall) end(err error) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended, c.endErr = true, err
	if c.reading {
		c.mu.Unlock()
		return // round finishes it
	}
	c.reading = true
	c.mu.Unlock()
	c.finish(err)
}

// finish lets go of every registration, then the slot (unless the read
// that served the call released it), and answers.
func (c *waitCall) finish(err error) {
	c.mu.Lock()
	c.ended = true
	var cancel func()
	if c.listening {
		cancel = c.cancelNews
	}
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	for _, r := range c.release {
		r()
	}
	if slot := c.slot.Swap(0); slot != 0 {
		c.f.releaseWait(slot)
	}
	c.answer(err)
}

// QueryTimeout is the bound of one database round of an operation; the
// bindings give a request that does not wait this deadline, and a waiting
// request this plus its wait.
func (f *Forum) QueryTimeout() time.Duration { return f.queryTimeout }
