package services

import (
	"context"
	"sync"
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
	f.waitThen(ctx, who, wait, news, read, func(err error) { done <- err })
	return <-done
}

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
// A registration with the hub is kept until it fires, and a call that a
// wake-up starts reading registers again only when that read finds
// nothing (round). So the thousands of calls that one ask wakes, and that
// the round after it answers, neither register again nor cancel: each a
// taking of the hub's lock, which they all contend for at once.
func (f *Forum) waitThen(ctx context.Context, who Caller, wait time.Duration, news waitNews, read func(context.Context) (bool, error), answer func(error)) {
	c := &waitCall{f: f, ctx: ctx, who: who, give: time.Now().Add(wait), waits: wait > 0, news: news, read: read, answer: answer, reading: true}
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
	answer func(error)

	opened  bool     // the slot and the watches are held (after the first read that found nothing)
	release []func() // what ends them, the slot's release last

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
		left := time.Until(c.give)
		if err != nil || found || left <= 0 {
			c.finish(err)
			return
		}
		if !standing {
			c.listen()
			if c.news.count() != seen {
				continue // news during the read, perhaps before the registration
			}
		}
		if !c.opened {
			c.opened = true
			release, err := c.f.openWait(c.ctx, c.who, left)
			if err != nil {
				c.finish(err)
				return
			}
			_, unwatch := c.f.watchTokenThen(c.who, func() { c.end(revokedRefusal()) })
			timer := time.AfterFunc(left, func() { c.end(nil) })
			stopCtx := context.AfterFunc(c.ctx, func() { c.end(nil) })
			c.release = []func(){func() { timer.Stop() }, func() { stopCtx() }, unwatch, release}
		}
		c.mu.Lock()
		switch {
		case c.ended:
			c.mu.Unlock()
			c.finish(c.endErr)
			return
		case c.woken:
			c.mu.Unlock()
			continue
		}
		c.reading = false
		c.mu.Unlock()
		return
	}
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
// reads again) or the call has ended.
func (c *waitCall) wake() {
	c.mu.Lock()
	c.listening = false
	switch {
	case c.ended:
	case c.reading:
		c.woken = true
	default:
		c.reading = true
		go c.round(true)
	}
	c.mu.Unlock()
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

// finish lets go of every registration, then the slot, and answers.
func (c *waitCall) finish(err error) {
	c.mu.Lock()
	c.ended = true
	cancel := c.cancelNews
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	for _, r := range c.release {
		r()
	}
	c.answer(err)
}

// QueryTimeout is the bound of one database round of an operation; the
// bindings give a request that does not wait this deadline, and a waiting
// request this plus its wait.
func (f *Forum) QueryTimeout() time.Duration { return f.queryTimeout }
