package services_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestRandomWalk posts thousands of random acts — every kind, random
// parents, random callers (models with and without authority, extensions,
// a lock holder, a human), confirmations — on a few threads at a time, and
// checks the invariants of errata 1 after every step:
//
//   - the awaited party can always take its turn: it can answer the turn's
//     message, and the thread accepts it;
//   - a model's act never changes the state of record;
//   - the thread refuses messages exactly when its state of record is
//     closed or a side state;
//   - no message awaits its own author;
//   - the event log replays to the thread's state.
//
// The walk is seeded: set PARLEY_WALK_SEED to replay a failure, whose
// message names the seed. PARLEY_WALK_STEPS overrides the step count
// (10,000 on SQLite, 1,500 on PostgreSQL; a tenth of that with -short).
func TestRandomWalk(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PARLEY_WALK_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			steps := map[string]int{"sqlite": 10000, "postgres": 1500}[dialect]
			if testing.Short() {
				steps /= 10
			}
			if s := os.Getenv("PARLEY_WALK_STEPS"); s != "" {
				steps, _ = strconv.Atoi(s)
			}
			newWalk(t, dbtest.Fresh(t, dialect), seed).run(steps)
		})
	}
}

// walk is one random walk's world.
type walk struct {
	*world
	t       *testing.T
	seed    uint64
	rng     *rand.Rand
	cfg     services.Config
	callers []walker
	threads []string
	step    int
}

// walker is a caller with what the walk needs to know of it.
type walker struct {
	name  string
	who   services.Caller
	model bool // a model without lock: its marks are proposals
}

var walkExtensions = []string{"", "w1", "w2"}

func newWalk(t *testing.T, db *gorm.DB, seed uint64) *walk {
	limits := services.DefaultLimits()
	// Limits are tested elsewhere; here they must never be what refuses.
	limits.ThreadMaxMessages, limits.ThreadMaxDepth = 1<<20, 1<<20
	cfg := services.Config{Limits: limits}
	w := &walk{
		world: &world{t: t, db: db, forum: services.New(db, cfg), ctx: context.Background()},
		t:     t, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x7061726c6579)), cfg: cfg,
	}
	for _, h := range []string{"alice", "bob", "carol"} {
		w.callers = append(w.callers, walker{h, w.agent(h), true})
	}
	w.callers = append(w.callers,
		walker{"mod", w.agent("mod", services.RightRead, services.RightWrite, services.RightLock), false},
		walker{"ada", w.human("ada"), false})
	return w
}

func (w *walk) failf(format string, args ...any) {
	w.t.Helper()
	w.t.Fatalf("seed %d (PARLEY_WALK_SEED=%d), step %d: %s", w.seed, w.seed, w.step, fmt.Sprintf(format, args...))
}

func (w *walk) run(steps int) {
	refused := map[services.Reason]int{}
	for w.step = 0; w.step < steps; w.step++ {
		if len(w.threads) < 3 || w.rng.IntN(40) == 0 {
			c := w.pick()
			e := env{"kind": "ask", "body": "topic " + strconv.Itoa(w.step)}
			if ext := w.ext(); ext != nil {
				e["from"] = ext
			}
			p, err := w.post(c.who, e)
			if err != nil {
				w.failf("opening a thread: %v", err)
			}
			w.threads = append(w.threads, p.Thread.ID)
			continue
		}
		th := w.threads[len(w.threads)-1-w.rng.IntN(min(4, len(w.threads)))]
		before := w.thread(th)
		c := w.pick()
		if w.rng.IntN(3) == 0 { // the creator acts often: most marks are its own
			c = w.byIdentity(before.Thread.CreatedBy.Identity)
		}
		var err error
		if w.rng.IntN(12) == 0 {
			err = w.confirm(c, th, before.Thread)
		} else {
			err = w.act(c, th, before)
		}
		if r, unexpected := services.AsRefusal(err); err != nil {
			if unexpected {
				w.failf("fault: %v", err)
			}
			refused[r.Reason]++
		}
		w.check(c, th, before.Thread)
	}
	w.sweep()
	w.t.Logf("seed %d: %d steps on %d threads; refusals %v", w.seed, steps, len(w.threads), refused)
}

func (w *walk) pick() walker { return w.callers[w.rng.IntN(len(w.callers))] }

func (w *walk) byIdentity(identity string) walker {
	for _, c := range w.callers {
		if c.who.Identity == identity {
			return c
		}
	}
	w.failf("no caller is %s", identity)
	return walker{}
}

func (w *walk) ext() map[string]any {
	if e := walkExtensions[w.rng.IntN(len(walkExtensions))]; e != "" {
		return map[string]any{"extension": e}
	}
	return nil
}

// act posts one random envelope into a thread.
func (w *walk) act(c walker, th string, view services.ThreadView) error {
	kinds := []string{"ask", "answer", "answer", "clarify", "note", "propose", "object", "decide", "mark", "mark", "reopen"}
	e := env{"kind": kinds[w.rng.IntN(len(kinds))], "thread": th, "body": "step " + strconv.Itoa(w.step)}
	if ext := w.ext(); ext != nil {
		e["from"] = ext
	}
	if msgs := flatten(view.Messages); w.rng.IntN(4) > 0 {
		e["parent"] = msgs[w.rng.IntN(len(msgs))].ID
	}
	switch e["kind"] {
	case "mark":
		e["state"] = string(everyState[w.rng.IntN(len(everyState))])
	case "ask":
		if w.rng.IntN(2) == 0 {
			to := w.pick()
			e["to"] = map[string]any{"identity": to.who.Identity}
		}
	}
	p, err := w.post(c.who, e)
	if err == nil {
		if a := p.Message.Awaiting; a != nil && a.Identity == p.Message.From.Identity && deref(a.Extension) == deref(p.Message.From.Extension) {
			w.failf("%s by %s awaits its own author: %s", e["kind"], c.name, str(a))
		}
	}
	return err
}

// confirm confirms the thread's current state, pending or not, as a lock
// holder or human would (a model is refused).
func (w *walk) confirm(c walker, th string, before services.Thread) error {
	_, err := w.forum.Confirm(w.ctx, c.who, th, []byte(`{"state":"`+string(before.State)+`"}`))
	return err
}

// check tests the invariants on the thread the step touched.
func (w *walk) check(c walker, th string, before services.Thread) {
	w.t.Helper()
	view := w.thread(th)
	after := view.Thread
	if c.model && after.StateOfRecord != before.StateOfRecord {
		w.failf("%s, a model, moved the state of record %s → %s", c.name, before.StateOfRecord, after.StateOfRecord)
	}
	if after.Confirmed != (after.State == after.StateOfRecord) {
		w.failf("thread %s is %s on record %s but confirmed=%v", th, after.State, after.StateOfRecord, after.Confirmed)
	}
	ended := services.Terminal(after.StateOfRecord)
	err := w.try(w.callers[4].who, env{"kind": "note", "thread": th, "body": "probe"})
	switch {
	case !ended && err != nil:
		w.failf("thread %s (record %s) refused a human's note: %v", th, after.StateOfRecord, err)
	case after.StateOfRecord == services.Closed && !isReason(err, services.ThreadLocked),
		ended && after.StateOfRecord != services.Closed && !isReason(err, services.ThreadEnded):
		w.failf("thread %s (record %s) answered a note with %v", th, after.StateOfRecord, err)
	}
	if !ended && after.Awaiting != nil {
		w.checkTurn(th, view)
	}
	events := w.events(th)
	got, err := replay(events)
	if err == nil {
		err = got.matches(after)
	}
	if err != nil {
		w.failf("thread %s: %v", th, err)
	}
}

// checkTurn: the awaited party can answer the message whose turn is open
// (the last message that is not a note: a note carries the turn forward).
func (w *walk) checkTurn(th string, view services.ThreadView) {
	w.t.Helper()
	msgs := flatten(view.Messages)
	slices.SortFunc(msgs, func(a, b *services.Message) int { return cmpID(a.ID, b.ID) })
	var turn *services.Message
	for _, m := range msgs {
		if m.Kind != services.Note {
			turn = m
		}
	}
	a := view.Thread.Awaiting
	var tried []string
	for _, c := range w.callers {
		if a.Identity != "*" && a.Identity != c.who.Identity {
			continue
		}
		ext := deref(a.Extension)
		if a.Extension == nil {
			ext = "rw" // an extension nobody in the walk writes with
		}
		e := env{"kind": "answer", "thread": th, "parent": turn.ID, "body": "taking the turn", "from": map[string]any{"extension": ext}}
		err := w.try(c.who, e)
		if err == nil {
			return
		}
		tried = append(tried, fmt.Sprintf("%s/%s: %v", c.name, ext, err))
	}
	w.failf("thread %s awaits %s and nobody awaited can answer %s: %v", th, str(a), turn.ID, tried)
}

// sweep checks every stored message once more at the end.
func (w *walk) sweep() {
	for _, th := range w.threads {
		for _, m := range flatten(w.thread(th).Messages) {
			if a := m.Awaiting; a != nil && a.Identity == m.From.Identity && deref(a.Extension) == deref(m.From.Extension) {
				w.failf("%s (%s) awaits its own author", m.ID, m.Kind)
			}
		}
	}
}

// try posts in a transaction that is rolled back: would it be accepted?
func (w *walk) try(who services.Caller, e env) error {
	tx := w.db.Begin()
	if tx.Error != nil {
		w.failf("begin: %v", tx.Error)
	}
	defer tx.Rollback()
	raw, _ := json.Marshal(e)
	_, err := services.New(tx, w.cfg).Post(w.ctx, who, raw)
	return err
}

func (w *walk) events(th string) []services.Event {
	var out []services.Event
	for since := ""; ; {
		page, err := w.forum.Events(w.ctx, w.callers[4].who, services.EventsQuery{Thread: th, Since: since, Limit: "200"})
		if err != nil {
			w.failf("events: %v", err)
		}
		out = append(out, page.Events...)
		if len(page.Events) < 200 {
			return out
		}
		since = page.Cursor
	}
}

func flatten(ms []*services.Message) []*services.Message {
	var out []*services.Message
	for _, m := range ms {
		out = append(out, m)
		out = append(out, flatten(m.Replies)...)
	}
	return out
}

func cmpID(a, b string) int {
	x, _ := strconv.Atoi(a[len("msg_"):])
	y, _ := strconv.Atoi(b[len("msg_"):])
	return x - y
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func isReason(err error, reason services.Reason) bool {
	var r *services.Refusal
	return asRefusal(err, &r) && r.Reason == reason
}
