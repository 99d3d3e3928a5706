package services

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
)

// Read replicas (issue 24 item 2). With Config.Standbys, the reads that
// need no log horizon — read_thread, list_threads, search, the claims and
// the pages' reads — go to a streaming standby in rotation; writes,
// admission and the feed reads stay on the primary.
//
// Reading: the feed reads (inbox, events, the stream and every waiting
// call) stay on the primary. Their horizon (horizonSQL) reads the
// backend_xid of the primary's sessions, which a standby does not see: there
// it answers the snapshot's xmax, above a transaction still open on the
// primary, and a follower would skip that transaction's events for good
// (TestStandbyHorizonNaive shows it). A standby's own snapshot xmin would
// be safe, but a feed on a standby also lags by the replay delay, and its
// waiters are woken by NOTIFY, which runs on the primary only: the feed
// would wake on news it cannot see yet. Feed reads are small (an index
// range above a cursor); the reads that cost — threads, lists, search —
// are the ones moved.
//
// The thread page, served by a standby, lists its thread's events there
// with the primary's horizon: a listing read whole at each new version of
// the thread, not a cursor a follower advances, so it can show an event a
// moment late but never skip one for good.
//
// Reading: read-your-writes. A caller whose identity posted within
// readYourWritesWindow reads from the primary until a standby has replayed
// past the primary's WAL insert position at the caller's admission, which
// lies past the commit of every write acknowledged before the request.
// The state is the database's: admission (on the primary, one statement it
// sends anyway) reads the identity's newest message and, only if it is
// recent, pg_current_wal_insert_lsn(); so it holds across any number of
// stateless app servers, and costs one index probe (messages_author) per
// admission and nothing per write. The window covers every write a standby
// in rotation may still lack: a standby whose lag passes MaxLag leaves
// rotation within one check.
//
// A standby leaves rotation when it fails a check, lags more than MaxLag,
// is promoted (no longer in recovery), or a read on it fails; it comes back
// at the first check that finds it healthy. /readyz reports the standbys.

// DefaultReadMaxLag is how far behind the primary a standby may replay and
// still serve reads.
const DefaultReadMaxLag = 5 * time.Second

// standbyCheckEvery is how often the standbys' replay is compared with the
// primary's WAL.
const standbyCheckEvery = 200 * time.Millisecond

// Standby is one read replica: its connection and a name for logs and
// /readyz that holds no secret (its host and port).
type Standby struct {
	Name string
	DB   *gorm.DB
	// Open connects when DB is nil (the standby did not answer at start):
	// the checks call it until it answers, then the standby joins.
	Open func() (*gorm.DB, error)
}

// replicas routes reads between the primary and its standbys.
type replicas struct {
	primary *Forum
	maxLag  time.Duration
	views   []*Forum // one per standby: the Forum with the standby's db
	opens   []func() (*gorm.DB, error)
	state   []standbyState

	mu      sync.Mutex
	samples []walSample // the primary's WAL position over the last checks
}

type walSample struct {
	at  time.Time
	lsn uint64
}

type standbyState struct {
	name    string
	up      atomic.Bool
	opened  atomic.Bool // its view's db is set (see Standby.Open)
	opening atomic.Bool
	replay  atomic.Uint64 // its last replayed LSN at the last check
	mu      sync.Mutex
	why     string // why it is out of rotation, "" in rotation
	lag     time.Duration
}

func (s *standbyState) set(up bool, why string, lag time.Duration) (changed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed = s.up.Load() != up || (!up && why != s.why)
	s.up.Store(up)
	s.why, s.lag = why, lag
	return changed
}

// readYourWritesWindow is how recent a caller's last post is for its reads
// to need a standby that replayed it (see Reading above).
func (r *replicas) readYourWritesWindow() time.Duration {
	return r.maxLag + 10*standbyCheckEvery + 5*time.Second
}

// newReplicas builds the views over each standby's connection. They share
// the primary Forum's hub and caches; only their db differs, and their own
// replicas are nil, so a view never routes again.
func newReplicas(f *Forum, standbys []Standby, maxLag time.Duration) *replicas {
	if maxLag <= 0 {
		maxLag = DefaultReadMaxLag
	}
	r := &replicas{primary: f, maxLag: maxLag, state: make([]standbyState, len(standbys))}
	for i, s := range standbys {
		v := &Forum{db: s.DB, realm: f.realm, limits: f.limits, now: f.now, hub: f.hub, queryTimeout: f.queryTimeout,
			heartbeat: f.heartbeat, digest: f.digest, streams: f.streams, trusted: f.trusted, primary: f, leases: f.leases}
		r.views = append(r.views, v)
		r.opens = append(r.opens, s.Open)
		r.state[i].name = s.Name
		r.state[i].opened.Store(s.DB != nil)
		r.state[i].why = "not checked yet"
	}
	return r
}

// StartReplicas checks the standbys now and every standbyCheckEvery until
// ctx ends, logging each one's leaving and rejoining the rotation. It
// returns after the first check, so that a server starts with its healthy
// standbys in rotation.
func (f *Forum) StartReplicas(ctx context.Context, log *slog.Logger) {
	r := f.reads
	if r == nil {
		return
	}
	r.check(ctx, log)
	go func() {
		t := time.NewTicker(standbyCheckEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				r.check(ctx, log)
			}
		}
	}()
}

// check samples the primary's WAL position, then each standby's replay
// position, and sets each standby's place in the rotation. A standby's lag
// is how long ago the primary's WAL stood where the standby's replay
// stands now (0 when it has replayed the newest sample).
func (r *replicas) check(ctx context.Context, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, max(time.Second, 5*standbyCheckEvery))
	defer cancel()
	var primary string
	now := time.Now()
	if err := scanRow(r.primary.db.WithContext(ctx).Raw("SELECT pg_current_wal_lsn()::text"), &primary); err == nil {
		if lsn, err := parseLSN(primary); err == nil {
			r.mu.Lock()
			r.samples = append(r.samples, walSample{now, lsn})
			// Keep samples over twice the largest lag that matters.
			for len(r.samples) > 1 && now.Sub(r.samples[1].at) > 2*r.maxLag+time.Second {
				r.samples = r.samples[1:]
			}
			r.mu.Unlock()
		}
	}
	for i, v := range r.views {
		s := &r.state[i]
		if !s.opened.Load() {
			r.open(i, log)
			continue
		}
		up, why, lag := r.probe(ctx, v, now)
		if s.set(up, why, lag) && log != nil {
			if up {
				log.Info("standby in rotation", "standby", s.name)
			} else {
				log.Warn("standby out of rotation", "standby", s.name, "why", why)
			}
		}
	}
}

// open connects to standby i in the background, once at a time; its view
// gets the connection before the next check reads it (opened).
func (r *replicas) open(i int, log *slog.Logger) {
	s := &r.state[i]
	if r.opens[i] == nil || !s.opening.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.opening.Store(false)
		db, err := r.opens[i]()
		if err != nil {
			s.set(false, "does not answer: "+errorClass(err), 0)
			return
		}
		r.views[i].db = db
		s.opened.Store(true)
		if log != nil {
			log.Info("standby connected", "standby", s.name)
		}
	}()
}

func (r *replicas) probe(ctx context.Context, v *Forum, now time.Time) (bool, string, time.Duration) {
	var recovering bool
	var replay *string
	if err := scanRow(v.db.WithContext(ctx).Raw("SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text"), &recovering, &replay); err != nil {
		return false, "does not answer: " + errorClass(err), 0
	}
	if !recovering || replay == nil {
		return false, "is not a standby in recovery (promoted?)", 0
	}
	lsn, err := parseLSN(*replay)
	if err != nil {
		return false, err.Error(), 0
	}
	r.stateOf(v).replay.Store(lsn)
	r.mu.Lock()
	defer r.mu.Unlock()
	lag := time.Duration(0)
	if n := len(r.samples); n > 0 && lsn < r.samples[n-1].lsn {
		// The newest sample at or below its replay: the primary stood
		// there then; past the oldest kept, the lag is at least its age.
		lag = now.Sub(r.samples[0].at)
		for j := n - 1; j >= 0; j-- {
			if r.samples[j].lsn <= lsn {
				lag = now.Sub(r.samples[j].at)
				break
			}
		}
	}
	if lag > r.maxLag {
		return false, fmt.Sprintf("lags %v, more than --db-read-max-lag %v", lag.Round(time.Millisecond), r.maxLag), lag
	}
	return true, "", lag
}

func (r *replicas) stateOf(v *Forum) *standbyState {
	for i := range r.views {
		if r.views[i] == v {
			return &r.state[i]
		}
	}
	return &standbyState{}
}

// errorClass names a driver error without its text, which may name hosts.
func errorClass(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return "connection or query failed (see the server's log of reads)"
}

// pick answers the view of a standby in rotation that may serve who's
// read, or nil for the primary.
func (r *replicas) pick(who Caller) *Forum {
	if r == nil || len(r.views) == 0 {
		return nil
	}
	var need uint64
	if who.wroteAt != "" {
		var err error
		if need, err = parseLSN(who.wroteAt); err != nil {
			return nil
		}
	}
	n := uint64(len(r.views))
	// Sticky per caller (a thread's ETag and its body read from the same
	// standby), spread over the standbys by token.
	h := fnv.New64a()
	h.Write([]byte(who.Identity))
	start := h.Sum64() + uint64(who.TokenID)
	for k := range n {
		i := (start + k) % n
		s := &r.state[i]
		if s.up.Load() && s.replay.Load() >= need {
			return r.views[i]
		}
	}
	return nil
}

// down takes a standby out of rotation after a failed read; the next check
// that finds it healthy puts it back.
func (r *replicas) down(v *Forum, err error) {
	s := r.stateOf(v)
	s.set(false, "a read failed: "+errorClass(err), 0)
}

// onStandby runs read on a standby in rotation for who, if there is one;
// ok reports whether it answered. A refusal is an answer; any other error
// takes the standby out of rotation, and the caller reads from the primary.
func onStandby[T any](f *Forum, who Caller, read func(*Forum) (T, error)) (v T, err error, ok bool) {
	r := f.reads
	if r == nil {
		return v, nil, false
	}
	s := r.pick(who)
	if s == nil {
		return v, nil, false
	}
	v, err = read(s)
	if err != nil {
		if _, unexpected := AsRefusal(err); unexpected {
			r.down(s, err)
			return v, nil, false
		}
	}
	return v, err, true
}

// writer is the Forum whose db takes writes: the primary itself, or the
// primary behind a standby's view.
func (f *Forum) writer() *Forum {
	if f.primary != nil {
		return f.primary
	}
	return f
}

// StandbyHealth is one standby's state for /readyz and the metrics.
type StandbyHealth struct {
	Name      string
	InService bool
	Why       string // why it is out of rotation
	Lag       time.Duration
}

// Standbys reports the read replicas' states (none without replicas).
func (f *Forum) Standbys() []StandbyHealth {
	if f.reads == nil {
		return nil
	}
	var out []StandbyHealth
	for i := range f.reads.state {
		s := &f.reads.state[i]
		s.mu.Lock()
		out = append(out, StandbyHealth{Name: s.name, InService: s.up.Load(), Why: s.why, Lag: s.lag})
		s.mu.Unlock()
	}
	return out
}

// ReplicaProblem says which standbys are out of rotation and why; "" when
// all serve (or there are none). /readyz reports it as degraded: reads
// fall back to the primary, correct but without the replicas' capacity.
func (f *Forum) ReplicaProblem() string {
	var out []string
	for _, s := range f.Standbys() {
		if !s.InService {
			out = append(out, "standby "+s.Name+" out of rotation: "+s.Why)
		}
	}
	return strings.Join(out, "; ")
}

// parseLSN reads PostgreSQL's text form of a WAL position, "16/B374D848".
func parseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	if !ok {
		return 0, fmt.Errorf("WAL position %q", s)
	}
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("WAL position %q", s)
	}
	return h<<32 | l, nil
}

// recentWriteSQL is the admission's column for read-your-writes: the
// primary's WAL insert position when the identity (its one parameter, a
// column or value) posted after the second parameter, else NULL.
func recentWriteSQL(identity string) string {
	return `(SELECT pg_current_wal_insert_lsn()::text WHERE (SELECT created_at FROM messages
		WHERE author_identity = ` + identity + ` ORDER BY id DESC LIMIT 1) > ?)`
}
