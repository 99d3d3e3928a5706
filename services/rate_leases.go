package services

import (
	"strings"
	"sync"
	"time"
)

// Rate-limit leases: how a request is counted on PostgreSQL without a
// write of its own (admitPG).
//
// Every request used to add one to its token's rows of rate_windows, in
// the admission's statement. That upsert, in a transaction of its own, was
// the largest single cost Parley added to a post (docs/performance.md,
// "Leased counts"). Now a process claims units of a window in advance: the
// admission that finds no unit left adds n to the row (a lease) and keeps
// the n−1 it did not use for the token's next requests, which need no
// write at all; the token read remains, so a revoked token is refused at
// once as before.
//
// What holds:
//   - The database's count is every unit claimed by every process, so the
//     requests admitted in a window never exceed the limit, with any number
//     of server processes (the row stays the shared state; a lease's
//     units are at most what the row granted it).
//   - With one process serving a token, the limit is exact: a request is
//     refused only when every unit of the window is used.
//   - With several processes serving one token, a request may be refused
//     while another process still holds unused units of that window. A
//     process's first lease of a token's window is one unit, and each
//     next one twice the last, but never more than a 32nd of what was left
//     of the window when it was taken (at least 1). So a process that
//     served a token a few times holds back little or nothing, near the
//     limit every request is counted one by one, and what a busy process
//     can hold back is at most a 32nd of the limit (with the defaults, 37
//     of 1,200 requests and 3 of 120 posts per minute).
//   - Units left at the end of a window are dropped with it.
//   - A lease is sized by the claiming process's limit: processes sharing
//     a database should run with the same limits (a process with a higher
//     one may claim units that a stricter one then finds spent, as its own
//     requests counted against the stricter one's limit before leases).
//
// The leases are this process's memory, one entry per token and bucket
// counted this window; entries of past windows are dropped once a minute.
type rateLeases struct {
	mu     sync.Mutex
	m      map[leaseKey]*rateLease
	window int64 // the window the map was last swept in
}

// leaseKey names a token by its public id: the admission takes a unit
// before its statement reads the token's row.
type leaseKey struct {
	public string
	bucket string
}

type rateLease struct {
	window int64 // Unix start of the window the units belong to
	left   int   // units claimed and not used yet
	seen   int   // the window's count in the database, as last answered
	next   int   // the next claim's size before the share's cap: twice the last
}

// leaseShare is the part of what is left of a window one lease claims.
const leaseShare = 32

// take uses one leased unit of the token's bucket in window, and says
// whether there was one; without, it answers how many units the
// admission's statement should claim.
func (l *rateLeases) take(key leaseKey, window int64, limit int) (took bool, claim int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen, next := 0, 1
	if e := l.m[key]; e != nil && e.window == window {
		if e.left > 0 {
			e.left--
			return true, 0
		}
		seen, next = e.seen, e.next
	}
	return false, max(1, min(next, (limit-seen)/leaseShare))
}

// granted records what the database answered for a claim of n units in
// window: count is the row's count after them. It answers the position of
// the request's own unit in the window (the first of the claim), which
// the caller holds to the limit as a per-request count (overLimit); the
// units after it, up to the limit, are kept for the next requests.
func (l *rateLeases) granted(key leaseKey, window int64, limit, n, count int) (position int) {
	position = count - n + 1
	usable := min(n, limit-(count-n))
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || l.window != window {
		l.sweep(window)
	}
	e := l.m[key]
	if e == nil || e.window != window {
		e = &rateLease{window: window}
		// The id may be a view of the request's buffer, which the server
		// reuses (Fiber's zero-copy strings): the map keeps a copy.
		key.public = strings.Clone(key.public)
		l.m[key] = e
	}
	e.seen = max(e.seen, count)
	e.next = max(e.next, 2*n)
	if usable > 1 {
		e.left += usable - 1 // another request's lease may have left units too
	}
	return position
}

// giveBack returns units taken for a request that was not admitted.
func (l *rateLeases) giveBack(keys []leaseKey, window int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		if e := l.m[k]; e != nil && e.window == window {
			e.left++
		}
	}
}

// sweep drops the leases of windows before window; l.mu is held.
func (l *rateLeases) sweep(window int64) {
	if l.m == nil {
		l.m = map[leaseKey]*rateLease{}
	}
	for k, e := range l.m {
		if e.window < window {
			delete(l.m, k)
		}
	}
	l.window = window
}

// windowOf is the Unix start of the one-minute window holding t.
func windowOf(t time.Time) int64 { return t.Truncate(time.Minute).Unix() }
