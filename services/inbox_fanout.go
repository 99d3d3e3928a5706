package services

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// fanout serves the waiting inboxes of this process that a wake-up finds
// (issue 31, item 3): one ask to anyone wakes every one of them, and each
// used to run its own inbox query — ten thousand reads for one post. Now
// the woken waiters join a round, and a round is one read of the turns
// opened since the waiters' common position (fanoutTurns), which each
// waiter filters by the inbox's own rules (visibleTo) — the same answer
// its own query would give.
//
// Why the rows of a round are all a waiter can be shown: a waiter that
// read its inbox and found nothing after since knew that no turn visible
// to it lay below that read's horizon (from, see Inbox). A turn becomes
// visible to someone only by being given a new position — a post moves
// the turn (moveTurn), an escalation and a confirmed reopen count it as
// new (escalateLocked, confirm.go) — which every write committed after
// that read takes at or above its horizon (store_positions.go). So the
// turns it may be shown now are among those at or above from, and a round
// reads them from the lowest from of its waiters, up to its own horizon
// (settleWith: nothing held back is shown, nothing is skipped).
//
// What a round does not cover, a waiter reads itself, as before: a round
// cut by fanoutRows (more turns opened than it reads at once), and the
// inboxes of humans and lock holders, which list escalated threads
// whoever they await (inboxPage).
//
// Scaling: it keeps only the waiters of this process in memory, for the
// time of one round; the database stays the truth, and any number of
// processes on one database each serve their own waiters with one read
// per wake-up.
type fanout struct {
	round func([]*fanWaiter) // Forum.fanRound

	mu      sync.Mutex
	pending []*fanWaiter
	running bool
	held    int // advances of the hub under way: their waiters join, the round waits (hold)

	rounds, served atomic.Int64 // for tests: the reads made, the waiters served by them
}

// fanoutRows bounds one round's read; past it, a round covers the turns up
// to its last row, and the waiters it leaves without an answer read their
// own inbox.
const fanoutRows = 1000

// fanWaiter is one waiting inbox in a round: whose, from which cursor and
// extension, and from which position (from) turns may be visible to it;
// then takes the round's answer. slot, unless nil, holds the call's slot
// row, which the round releases when it serves the call something (the
// call then answers).
type fanWaiter struct {
	who       Caller
	ext       string
	since     int64
	from      int64
	limit     int
	addressed bool
	slot      *atomic.Int64
	then      func(fanAnswer)
}

// fanAnswer is a round's answer to one waiter: its page when covered, and
// the position up to which the round read (every turn below it that the
// waiter may be shown is in items).
type fanAnswer struct {
	items   []InboxItem
	upTo    int64
	covered bool
	err     error
}

// page is the inbox page of a covered answer, with its cursor.
func (w *fanWaiter) page(a fanAnswer) Inbox {
	box := Inbox{Items: a.items, Cursor: encodeInboxCursor(w.since, w.addressed)}
	if box.Items == nil {
		box.Items = []InboxItem{} // "items": [], never null
	}
	if len(a.items) > 0 {
		box.Cursor = encodeInboxCursor(a.items[len(a.items)-1].position, w.addressed)
	}
	return box
}

// sharedInbox reads a woken waiter's inbox through a round, in the calling
// goroutine: ok false when the round did not cover it (it then reads its
// own).
func (f *Forum) sharedInbox(ctx context.Context, w *fanWaiter) (a fanAnswer, ok bool, err error) {
	done := make(chan fanAnswer, 1)
	w.then = func(a fanAnswer) { done <- a }
	f.joinRound(w)
	select {
	case a = <-done:
	case <-ctx.Done():
		return fanAnswer{}, false, ctx.Err()
	}
	return a, a.err == nil && a.covered, a.err
}

// joinRound adds w to the next round, which calls w.then.
func (f *Forum) joinRound(w *fanWaiter) {
	x := f.fan
	x.mu.Lock()
	x.pending = append(x.pending, w)
	x.startLocked()
	x.mu.Unlock()
}

// hold keeps the next round from starting until let: the hub holds it
// while it wakes the waiters of one advance, so that one round serves them
// all. A round started at the first of thousands of wake-ups served a
// handful, and the next one began only once their answers, running on
// every core, let its goroutine in again.
func (x *fanout) hold() {
	x.mu.Lock()
	x.held++
	x.mu.Unlock()
}

func (x *fanout) let() {
	x.mu.Lock()
	x.held--
	x.startLocked()
	x.mu.Unlock()
}

// startLocked starts the rounds, if waiters are pending, nothing holds
// them and none runs.
func (x *fanout) startLocked() {
	if x.held == 0 && !x.running && len(x.pending) > 0 {
		x.running = true
		go x.run()
	}
}

// run runs rounds while waiters are pending: each round serves the
// waiters that joined before it began, so its read follows every wake-up
// they had (a waiter joins only once woken).
func (x *fanout) run() {
	for {
		x.mu.Lock()
		batch := x.pending
		x.pending = nil
		if len(batch) == 0 {
			x.running = false
			x.mu.Unlock()
			return
		}
		x.mu.Unlock()
		x.round(batch)
	}
}

// fanRound reads once for batch, releases in one statement the slots of
// the waiters it serves something (each then answers), and answers each
// waiter.
func (f *Forum) fanRound(batch []*fanWaiter) {
	low := batch[0].from
	seen := map[string]bool{}
	var identities []string
	anyoneToo := false
	for _, w := range batch {
		low = min(low, w.from)
		if !seen[w.who.Identity] {
			seen[w.who.Identity] = true
			identities = append(identities, w.who.Identity)
		}
		anyoneToo = anyoneToo || !w.addressed
	}
	if anyoneToo {
		identities = append(identities, Anyone)
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.queryTimeout)
	defer cancel()
	rows, upTo, err := f.fanoutTurns(ctx, low, identities)
	f.fan.rounds.Add(1)
	if err != nil {
		for _, w := range batch {
			w.then(fanAnswer{err: err})
		}
		return
	}
	now := f.timestamp()
	items := make([]InboxItem, len(rows))
	for i, r := range rows {
		items[i] = InboxItem{Thread: f.threadShape(r.thread, now), Message: messageShape(r.message), position: r.thread.TurnSeq, shared: &sharedJSON{}}
	}
	answers := make([]fanAnswer, len(batch))
	var slots, tokens []int64
	for i, w := range batch {
		a := fanAnswer{upTo: upTo, covered: w.from < upTo}
		if a.covered {
			for i, r := range rows {
				if len(a.items) == w.limit {
					break
				}
				if pos := r.thread.TurnSeq; pos > w.since && pos >= w.from && w.visibleTo(r) {
					a.items = append(a.items, items[i])
				}
			}
			// A round cut short covers only up to its last row: a waiter
			// short of a full page may have more above, and reads itself.
			if len(a.items) < w.limit && len(rows) == fanoutRows {
				a.covered = false
			}
			if a.covered {
				f.fan.served.Add(1)
			}
		}
		if a.covered && len(a.items) > 0 && w.slot != nil {
			if slot := w.slot.Swap(0); slot != 0 {
				slots, tokens = append(slots, slot), append(tokens, w.who.TokenID)
			}
		}
		answers[i] = a
	}
	// Before the answers, as releaseWait: a client's next wait never
	// counts the one just answered (releaseServed).
	released := func() {}
	if len(slots) > 0 {
		released = f.releaseServed(ctx, tokens, slots)
	}
	answerEach(batch, answers)
	released()
}

// answerEach gives each waiter its answer, on as many goroutines as the
// process has cores (each answer may write to a connection: see
// waitCall.afterLater), and returns once all are given.
func answerEach(batch []*fanWaiter, answers []fanAnswer) {
	chunk := len(batch)
	if n := runtime.GOMAXPROCS(0); len(batch) >= 64*n {
		chunk = (len(batch) + n - 1) / n
	}
	var wg sync.WaitGroup
	for start := chunk; start < len(batch); start += chunk {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := start; i < min(start+chunk, len(batch)); i++ {
				batch[i].then(answers[i])
			}
		}()
	}
	for i := range chunk {
		batch[i].then(answers[i])
	}
	wg.Wait()
}

// visibleTo is the inbox's rule for one open turn of a thread not in a
// terminal state of record (inboxTurnsSQL says the same in SQL): the turn
// awaits the waiter's identity — with an extension, none or that one — or,
// unless the view is the addressed one, anyone; and the waiter did not
// open it itself (hidden questions).
func (w *fanWaiter) visibleTo(r turnRow) bool {
	switch r.thread.AwaitingIdentity {
	case w.who.Identity:
		if w.ext != "" && r.thread.AwaitingExtension != "" && r.thread.AwaitingExtension != w.ext {
			return false
		}
	case Anyone:
		if w.addressed {
			return false
		}
	default:
		return false
	}
	return !(r.message.AuthorIdentity == w.who.Identity && r.message.AuthorExtension == w.ext)
}
