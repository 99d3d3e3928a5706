package services

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"gorm.io/gorm"

	"parley/models"
)

// Long-lived calls — event streams, waiting reads, a page's /live stream —
// each hold a slot while they run: a row of the streams table, counted by
// every process on the database against the limit of its kind (issue 23:
// one credential must not fill every connection). A stream's and a /live
// row are refreshed by their process and released by it when their client
// goes away (stream_local.go); a wait's row carries the latest its wait
// lasts (ends_at) and stops counting then whatever happens to its process,
// so it needs no refresh.
//
// Cost: a call that holds a slot costs one short transaction when it
// starts (lock, count, insert) and one DELETE when it ends; a waiting read
// takes its slot only once its first read found nothing, so a read that
// answers at once costs nothing more.

// slotKind is what a slot counts against.
type slotKind string

const (
	slotStream slotKind = "stream" // streams_per_token, by token
	slotWait   slotKind = "wait"   // waits_per_token, by token
	slotLive   slotKind = "live"   // liveStreamsPerSession, by session
)

// holder is whom a slot counts against: a token (streams, waits) or a web
// session (/live), within one kind.
type holder struct {
	kind slotKind
	id   int64 // the token's id, or the session's key (sessionKey)
}

// column is the streams column holding the holder's id.
func (h holder) column() string {
	if h.kind == slotLive {
		return "session_key"
	}
	return "token_id"
}

// lockKey is the holder's advisory lock key on PostgreSQL: 32 bits of its
// kind and id (keys that collide only wait on each other a moment).
func (h holder) lockKey() int32 {
	k := uint64(h.id)
	for _, c := range h.kind {
		k = k*31 + uint64(c)
	}
	return int32(k ^ k>>32)
}

// openSlot records a slot for h unless limit slots of h count already
// (limit 0 or less: no limit); refuse builds the refusal from the counted
// rows then. ends is a wait's end, nil for the kinds refreshed by their
// process. The count and the insert run under a lock on the holder, so
// that concurrent calls, in any process, never both take the last slot.
func (f *Forum) openSlot(ctx context.Context, h holder, limit int, ends *time.Time, refuse func(counted []models.Stream, now time.Time) *Refusal) (int64, error) {
	now := f.timestamp()
	s := models.Stream{Kind: string(h.kind), OpenedAt: now, SeenAt: now, EndsAt: ends}
	if h.kind == slotLive {
		s.SessionKey = h.id
	} else {
		s.TokenID = h.id
	}
	ctx, cancel := context.WithTimeout(ctx, f.queryTimeout)
	defer cancel()
	err := f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if models.IsPostgresDB(tx) {
			if err := tx.Exec("SELECT pg_advisory_xact_lock('streams'::regclass::oid::int, ?)", h.lockKey()).Error; err != nil {
				return err
			}
		}
		q := tx.Where(h.column()+" = ? AND kind = ?", h.id, string(h.kind))
		if ends != nil {
			q = q.Where("ends_at > ?", now)
		} else {
			q = q.Where("seen_at > ?", now.Add(-streamFresh))
		}
		var counted []models.Stream
		if err := q.Find(&counted).Error; err != nil {
			return err
		}
		if limit > 0 && len(counted) >= limit {
			return refuse(counted, now)
		}
		return tx.Create(&s).Error
	})
	if err != nil {
		if s.ID != 0 && models.IsPostgresDB(f.db) {
			// The insert ran and only the COMMIT failed: it may have
			// committed all the same (its answer was lost, or the call's
			// deadline struck while it came). Nothing else would release
			// the row, and it would count against its holder — a wait's
			// until its ends_at, a stream's until it went stale. A
			// sequence never gives an id twice, so if the COMMIT did
			// fail this deletes nothing; SQLite's COMMIT, in process,
			// cannot lose its answer, and may give a rolled-back id again.
			f.closeSlot(s.ID)
		}
		return 0, fmt.Errorf("open %s: %w", h.kind, err)
	}
	return s.ID, nil
}

// closeSlot deletes a slot's row, with a context of its own: the call's may
// have ended already (its client went away).
func (f *Forum) closeSlot(id int64) {
	ctx, cancel := context.WithTimeout(context.Background(), f.queryTimeout)
	defer cancel()
	f.db.WithContext(ctx).Delete(&models.Stream{}, id)
}

// openWait takes a waiting read's slot for the time it may still wait, and
// answers its row's id, for releaseWait (0: no slot). At waits_per_token the wait is refused,
// rate_limited, with retry_after the seconds until the soonest of the
// token's counted waits ends (each ends by then at the latest: its row
// stops counting at its ends_at). A caller without a token (a signed-in
// page) holds no slot.
//
// Reading: "concurrent waiting calls" are the calls that wait — whose
// first read found nothing. A call that finds something answers at once,
// takes no slot and is never refused for the cap.
func (f *Forum) openWait(ctx context.Context, who Caller, left time.Duration) (slot int64, err error) {
	if who.TokenID == 0 {
		return 0, nil
	}
	ends := f.timestamp().Add(left)
	limit := f.limits.WaitsPerToken
	id, err := f.openSlot(ctx, holder{slotWait, who.TokenID}, limit, &ends, func(counted []models.Stream, now time.Time) *Refusal {
		soonest := *counted[0].EndsAt
		for _, s := range counted[1:] {
			if s.EndsAt.Before(soonest) {
				soonest = *s.EndsAt
			}
		}
		retry := max(1, int((soonest.Sub(now)+time.Second-1)/time.Second))
		r := Refuse(RateLimited, "this token has %d waiting calls already, the most it may (waits_per_token); one of them ends within %d s", len(counted), retry)
		r.RetryAfter = retry
		return r
	})
	if err != nil {
		return 0, err
	}
	return id, nil
}

// slotReleases batches the releases of waiting calls' slots: thousands of
// waits may end at once (their waits passing together, their clients
// leaving, a wake-up's calls read again), and a DELETE (and a commit)
// each cost more than their reads. (The calls a round serves are released
// by the round itself: releaseServed.) A release joins the batch being gathered
// and returns once a statement has deleted its row — before the call
// answers, as before, so that a client's next wait never counts its last
// one. While one batch's statement runs, the next gathers (group commit).
// A batch holds at most releaseBatchMax ids: the calls of a full batch
// answer while the next one's statement runs, where one batch of every
// call a wake ends held all their answers until its last row was deleted.
// It holds only ids of this process's own rows, for the time of one
// statement.
type slotReleases struct {
	mu      sync.Mutex
	queue   []*releaseBatch // in order; the last one gathers
	running bool
}

// releaseBatchMax bounds the ids of one batch of releases.
const releaseBatchMax = 256

// releaseBatch is one DELETE's ids; done is closed once it has run.
type releaseBatch struct {
	ids  []int64
	done chan struct{}
}

// releaseWait deletes a waiting call's slot row with the other releases of
// this process at the time.
func (f *Forum) releaseWait(id int64) {
	r := f.releases
	r.mu.Lock()
	if n := len(r.queue); n == 0 || len(r.queue[n-1].ids) >= releaseBatchMax {
		r.queue = append(r.queue, &releaseBatch{done: make(chan struct{})})
	}
	b := r.queue[len(r.queue)-1]
	b.ids = append(b.ids, id)
	if !r.running {
		r.running = true
		go f.runReleases()
	}
	r.mu.Unlock()
	<-b.done
}

func (f *Forum) runReleases() {
	r := f.releases
	for {
		r.mu.Lock()
		if len(r.queue) == 0 {
			r.running = false
			r.mu.Unlock()
			return
		}
		b := r.queue[0]
		r.queue = r.queue[1:]
		r.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), f.queryTimeout)
		f.deleteSlots(ctx, b.ids)
		cancel()
		close(b.done)
	}
}

// deleteSlots deletes a batch of slot rows by id, on PostgreSQL along the
// primary key whatever the planner believes of the table's size. A wake
// ends thousands of waits that were admitted within seconds, before
// autovacuum has counted them: with the table's statistics of a few
// dozen rows, each batch's DELETE scanned the whole table (17 ms for 256
// rows among 10,000, 0.5-0.7 s of PostgreSQL's CPU per wake of a fresh
// forum). On PostgreSQL the ids go as one array (one statement text
// whatever the batch's size, where an IN list of n ids was a statement
// of its own for each n, parsed and described anew), and the SET LOCAL,
// the DELETE and COMMIT wait for one round trip with BEGIN (execLater).
func (f *Forum) deleteSlots(ctx context.Context, ids []int64) {
	_ = f.transact(ctx, func(tx *gorm.DB) error {
		if !models.IsPostgresDB(tx) {
			return tx.Delete(&models.Stream{}, ids).Error
		}
		if _, err := slotsBySeqScanOff.execLater(tx, -1); err != nil {
			return err
		}
		_, err := slotsDelete.execLater(tx, -1, ids)
		return err
	})
}

var (
	slotsBySeqScanOff = fixed("SET LOCAL enable_seqscan = off")
	slotsDelete       = fixed("DELETE FROM streams WHERE id = ANY(?)")
)

// releaseServed releases the wait slots ids, of tokens, of the calls a
// round serves (inbox_fanout.go), and returns once those calls may be
// answered; done waits for the release's end. On PostgreSQL its
// transaction first takes the advisory locks of the tokens' waits — the
// lock every new wait of theirs takes before it counts (openSlot) — and
// the DELETE and COMMIT then run while the calls are answered: a token's
// next wait, in any process, counts its slots only once they are gone.
// The DELETE of the thousands of slots one ask ends took 15–30 ms before
// the first answer. The locks are taken in the order of their keys, so
// two rounds never wait on each other in a cycle (openSlot takes one).
// On SQLite, one writer, the DELETE runs before the answers.
func (f *Forum) releaseServed(ctx context.Context, tokens []int64, ids []int64) (done func()) {
	if !models.IsPostgresDB(f.db) {
		f.deleteSlots(ctx, ids)
		return func() {}
	}
	keys := make([]int32, 0, len(tokens))
	for _, t := range tokens {
		keys = append(keys, holder{slotWait, t}.lockKey())
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	locked, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		unlock := sync.OnceFunc(func() { close(locked) })
		defer unlock() // the locks were not taken: answer anyway, as a failed release does
		_ = f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec(slotsLockTokens, pgArray(keys)).Error; err != nil {
				return err
			}
			unlock()
			if err := tx.Exec(slotsBySeqScanOff.postgres).Error; err != nil {
				return err
			}
			return tx.Exec("DELETE FROM streams WHERE id = ANY(?::bigint[])", pgArray(ids)).Error
		})
	}()
	<-locked
	return func() { <-finished }
}

// slotsLockTokens takes the advisory locks of waits' holders, in the
// order of their keys (a sorted array), as openSlot takes one.
const slotsLockTokens = "SELECT count(pg_advisory_xact_lock('streams'::regclass::oid::int, k)) FROM unnest(?::int[]) AS k"

// pgArray writes integers as a PostgreSQL array literal.
func pgArray[T int32 | int64](xs []T) string {
	b := make([]byte, 0, 2+len(xs)*8)
	b = append(b, '{')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return string(append(b, '}'))
}

// stillAdmitted is the refusal of a re-check, if it made one: a check that
// could not be made (the database is slow or away) is not a reason to end
// a call that was admitted, and the next heartbeat checks again.
func stillAdmitted(err error) *Refusal {
	var r *Refusal
	if errors.As(err, &r) {
		return r
	}
	return nil
}
