package services

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"parley/models"
)

// Log positions order every write (events, turns, activity) for the
// since cursors of the inbox and the events. A reader that has seen
// position N must never later be shown a position below N, or it would
// skip it.
//
// On PostgreSQL a position is the writing transaction's id (xid8, which
// only grows and never wraps) times positionsPerTx, plus a counter local to
// the transaction: no lock, no shared row, so writers in different threads
// never wait on each other. Transactions do not commit in xid order, so a
// reader only returns positions below the horizon, the oldest transaction
// id still running (pg_snapshot_xmin of its snapshot) times positionsPerTx:
// every transaction that could still commit a lower position has ended. A
// long transaction delays what readers see; it never makes them skip.
//
// The transaction id counts from an offset, the log_sequence row's value
// (0 unless a forum was imported: see Import). An imported forum keeps its
// positions, which may lie above what this server's transaction ids give
// (a forum moved from a busier PostgreSQL server); the offset puts every
// new position above them, so that the cursors agents kept stay valid.
//
// On SQLite writers are serialized (transactions begin immediate), so a
// counter row hands out positions in commit order and the horizon is
// unbounded.
const positionsPerTx = 1 << 20

// xidOffset reads the offset added to transaction ids (see positionsPerTx).
const xidOffset = "(SELECT value FROM log_sequence WHERE id = 1)"

// positionSQL selects the transaction's next log position (PostgreSQL);
// its one parameter is positionsPerTx.
const positionSQL = `(pg_current_xact_id()::text::bigint + ` + xidOffset + `) * ? +
	set_config('parley.pos', (COALESCE(NULLIF(current_setting('parley.pos', true), ''), '-1')::int + 1)::text, true)::int`

var nextPosition = fixed(`SELECT ` + positionSQL)

// nextSeq takes the next position in the log for the current transaction.
func nextSeq(tx *gorm.DB) (pos int64, err error) {
	defer func() {
		if s, ok := tx.Statement.Context.Value(sinkKey{}).(*sink); ok && err == nil {
			s.add(pos)
		}
	}()
	return positionsOf(tx).next(tx)
}

// logPositions is the log's order, behind one small interface so that its
// implementation can change without its readers and writers
// (docs/scaling.md): next hands the writing transaction its next
// position, horizon bounds what a reader of db may be shown (every
// position below it is final: no transaction can still commit one).
// Cursors carry positions; a design past one primary (vector cursors of
// {shard: position}) replaces both methods and the cursor's encoding.
type logPositions interface {
	next(tx *gorm.DB) (int64, error)
	horizon(ctx context.Context, db *gorm.DB) (int64, error)
}

// positionsOf is the implementation for db's dialect.
func positionsOf(db *gorm.DB) logPositions {
	if models.IsPostgresDB(db) {
		return xidPositions{}
	}
	return counterPositions{}
}

// xidPositions are PostgreSQL's: transaction ids (see positionsPerTx).
// lockThreadPG also takes a reply's first position in its lock's batch
// (takeEarlyPosition), a round trip less, with this same formula.
type xidPositions struct{}

func (xidPositions) next(tx *gorm.DB) (int64, error) {
	if pos, ok := takeEarlyPosition(tx); ok {
		return pos, nil
	}
	var pos int64
	err := scanFixed(tx, nextPosition, []any{positionsPerTx}, &pos)
	if err != nil {
		return 0, fmt.Errorf("next log position: %w", err)
	}
	if pos%positionsPerTx == positionsPerTx-1 {
		return 0, errors.New("next log position: too many positions in one transaction")
	}
	return pos, nil
}

func (xidPositions) horizon(ctx context.Context, db *gorm.DB) (int64, error) {
	var h int64
	if err := scanRow(db.WithContext(ctx).Raw(horizonSQL, positionsPerTx), &h); err != nil {
		return 0, fmt.Errorf("log horizon: %w", err)
	}
	return h, nil
}

// counterPositions are SQLite's: one counter row, writers taking turns.
type counterPositions struct{}

func (counterPositions) next(tx *gorm.DB) (int64, error) {
	// One statement: the counter incremented and read back (RETURNING,
	// SQLite 3.35 and later).
	var seq models.LogSequence
	res := tx.Model(&seq).Clauses(clause.Returning{Columns: []clause.Column{{Name: "value"}}}).
		Where("id = ?", 1).Update("value", gorm.Expr("value + 1"))
	if res.Error != nil {
		return 0, fmt.Errorf("next log position: %w", res.Error)
	}
	if res.RowsAffected != 1 {
		return 0, errors.New("next log position: counter row missing")
	}
	return seq.Value, nil
}

// horizon is the committed counter's next value: every position below it
// is committed.
func (counterPositions) horizon(ctx context.Context, db *gorm.DB) (int64, error) {
	var seq models.LogSequence
	if err := db.WithContext(ctx).Where("id = ?", 1).Take(&seq).Error; err != nil {
		return 0, fmt.Errorf("log horizon: %w", err)
	}
	return seq.Value + 1, nil
}

// settle runs read — a query of rows in ascending log position, which it
// returns — and answers how many of its first rows a reader may be shown:
// those below the horizon, the positions no running transaction can precede
// any more (see positionsPerTx). The horizon is read before the rows, so
// every position below it is in them. When rows above the horizon were
// read, their writers' elders are still running: settle reads again after
// a short wait (they usually end within milliseconds), until the caller's
// deadline; then it answers the rows below the horizon only — later, never
// lost. It also answers the horizon, so that a waiting read knows whether
// announced news is still held back. A read that fails once the deadline
// has passed answers what the read before it found final, so read must
// leave the rows of its last successful call when it fails.
//
// The horizon is the oldest transaction still running in this database
// (horizonSQL), so that transactions of other databases of the cluster
// never hold Parley's readers back; one of this database's that writes for
// long delays what readers see for as long as it runs.
func (f *Forum) settle(ctx context.Context, read func() ([]int64, error)) (int, error) {
	return f.settleWith(ctx, func(horizon *int64) ([]int64, error) {
		if horizon != nil {
			var err error
			if *horizon, err = f.horizon(ctx); err != nil {
				return nil, err
			}
		}
		return read()
	})
}

// settleWith is settle for a read that takes the horizon itself, before
// its rows, whenever horizon is not nil (the inbox sends both statements
// in one pgx batch: one round trip less).
func (f *Forum) settleWith(ctx context.Context, read func(horizon *int64) ([]int64, error)) (int, error) {
	if !models.IsPostgresDB(f.db) {
		// One writer at a time: nothing is held back, except by a fixed
		// horizon read before (a stream's two feeds cut at one position).
		pos, err := read(nil)
		horizon, fixed := ctx.Value(fixedHorizonKey{}).(int64)
		if err != nil || !fixed {
			return len(pos), err
		}
		n := sort.Search(len(pos), func(i int) bool { return pos[i] >= horizon })
		if held, ok := ctx.Value(heldBackKey{}).(*bool); ok && n < len(pos) {
			*held = true
		}
		return n, nil
	}
	wait := time.Millisecond
	final := -1 // how many rows the last read had below its horizon; -1 before a read
	for {
		horizon, fixed := ctx.Value(fixedHorizonKey{}).(int64)
		want := &horizon
		if fixed {
			want = nil
		}
		began := time.Now()
		pos, err := read(want)
		if err != nil {
			if final >= 0 && ctx.Err() != nil {
				// The deadline struck while reading again (a read outlasted
				// twice the last one, under load): what the last read found
				// final stands, as read keeps a failed read from its rows.
				return final, nil
			}
			return 0, err
		}
		n := sort.Search(len(pos), func(i int) bool { return pos[i] >= horizon })
		if n == len(pos) {
			return n, nil
		}
		if held, ok := ctx.Value(heldBackKey{}).(*bool); ok {
			*held = true // the caller reads again soon; it does not wait here
			return n, nil
		}
		if end, ok := ctx.Deadline(); ok && time.Until(end) < wait+2*time.Since(began) {
			// A read again would likely miss the deadline and answer
			// unavailable: answer what is final now instead.
			return n, nil
		}
		select {
		case <-ctx.Done():
			return n, nil
		case <-time.After(wait):
		}
		final = n
		wait = min(2*wait, 20*time.Millisecond)
	}
}

// horizonSQL computes the horizon: the lowest id among the transactions in
// progress in the current snapshot that belong to this database (a
// snapshot is cluster-wide; pg_stat_activity tells which database each
// session is in, and its backend_xid is the low 32 bits of the id), or the
// snapshot's upper bound when none does; plus the offset of an imported
// forum (xidOffset); times positionsPerTx. It assumes
// that every session writing Parley's tables runs as a role whose
// backend_xid it may read (the same role, or pg_read_all_stats).
const horizonSQL = `WITH snap AS (SELECT pg_current_snapshot() AS s),
	ours AS (SELECT backend_xid::text::bigint AS x FROM pg_stat_activity
		WHERE datname = current_database() AND backend_xid IS NOT NULL)
	SELECT (COALESCE(
		(SELECT min(x8::text::bigint) FROM snap, pg_snapshot_xip(snap.s) AS x8
			WHERE x8::text::bigint % 4294967296 IN (SELECT x FROM ours)),
		(SELECT pg_snapshot_xmax(s)::text::bigint FROM snap)) + ` + xidOffset + `) * ?`

// lastPosition is the highest log position an event holds (0 for none):
// a version that changes with every write of the log.
func lastPosition(db *gorm.DB) (int64, error) {
	var pos int64
	if err := db.Raw("SELECT COALESCE(MAX(seq), 0) FROM events").Scan(&pos).Error; err != nil {
		return 0, fmt.Errorf("last log position: %w", err)
	}
	return pos, nil
}

// logAdvanced reports whether the log holds a position, final now, at or
// above since — every position below since was final at an earlier look —
// and the horizon it looked up to, for the next look. Every write of the
// log leaves its position on an event or on its thread's activity_seq;
// a later write of the thread may overwrite the latter, but its own
// position then comes at or above since too. Two index probes.
func (f *Forum) logAdvanced(ctx context.Context, since int64) (int64, bool, error) {
	h, err := f.horizon(ctx)
	if err != nil {
		return 0, false, err
	}
	var found []int64
	err = f.db.WithContext(ctx).Raw(`SELECT 1 WHERE EXISTS (SELECT 1 FROM events WHERE seq >= ? AND seq < ?)
		OR EXISTS (SELECT 1 FROM threads WHERE activity_seq >= ? AND activity_seq < ?)`, since, h, since, h).Scan(&found).Error
	if err != nil {
		return 0, false, fmt.Errorf("log advanced: %w", err)
	}
	return h, len(found) > 0, nil
}

// heldBackKey marks a read that must not wait for the horizon (a stream,
// which reads again shortly anyway): settle answers at once and sets the
// *bool when it held rows back.
type heldBackKey struct{}

// fixedHorizonKey gives several reads one horizon (a stream reads two
// feeds and cuts both at the same position).
type fixedHorizonKey struct{}

// horizon is the position below which the log is final (see settle). On
// SQLite, whose writers take turns, it is the committed counter's next
// value: every position below it is committed.
func (f *Forum) horizon(ctx context.Context) (int64, error) {
	return positionsOf(f.db).horizon(ctx, f.db)
}
