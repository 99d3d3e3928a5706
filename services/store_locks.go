package services

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"parley/models"
)

// lockThread locks a thread until the transaction ends and reads it. Every
// writer of a thread takes this lock first, so the thread's writes are
// serialized.
//
// On PostgreSQL the lock is a transaction-scoped advisory lock on the
// thread's id, not a row lock: a row lock (FOR UPDATE) gives the waiting
// transaction its id before it waits, so a transaction that waited would
// carry an older id — and so older log positions (see positionsPerTx) —
// than the one it waited for. With an advisory lock the transaction id
// comes with the first write after the lock, and a thread's positions
// follow the order its writers held it. A transaction that needs several
// threads takes all their locks, in ascending id order, before writing.
// On SQLite the whole database is already locked: transactions begin
// immediate (see models.Open).
func lockThread(tx *gorm.DB, id int64) (models.Thread, error) {
	if a := actionOf(tx); a != nil {
		return lockThreadBatched(tx, a, id)
	}
	if models.IsPostgresDB(tx) {
		// Keyed by the threads table's oid and the thread id, so that forums
		// in other schemas of the same database never wait on each other.
		if err := lockThreadPG(tx, id); err != nil {
			return models.Thread{}, fmt.Errorf("lock thread: %w", err)
		}
	}
	th, err := readThreadRow(tx, id)
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return th, threadNotFound(id)
	}
	if err != nil {
		return th, fmt.Errorf("lock thread: %w", err)
	}
	return th, nil
}

// lockThreadPG takes a thread's advisory lock (see lockThread). When the
// caller asked for it (wantEarlyPosition: a reply, at the last lock its
// transaction takes), the same statement also takes the transaction's
// first log position, which nextSeq then hands out without a round trip of its
// own: a post is one statement shorter (pprof showed the post path bound
// by round trips, not by Go).
//
// The lock is taken in a subquery that PostgreSQL evaluates first (OFFSET
// 0 keeps it from being flattened), so the transaction id — given by
// pg_current_xact_id — is assigned only once the lock is held: a
// transaction that waited still carries a younger id than the one it
// waited for, as lockThread requires. It must be the transaction's last
// lock: a transaction that took its id and then waited for another lock
// would carry an older id than the writer it waited for, and its positions
// in that thread would come before that writer's.
func lockThreadPG(tx *gorm.DB, id int64) error {
	s, ok := tx.Statement.Context.Value(sinkKey{}).(*sink)
	conn, inTx := tx.Statement.ConnPool.(*sql.Tx)
	if !ok || !inTx || !s.early.wanted || s.early.tx != nil {
		return lockOnly.exec(tx, int32(id)).Error
	}
	var pos int64
	err := scanFixed(tx, lockWithPosition, []any{positionsPerTx, int32(id)}, &pos)
	if err != nil {
		return err
	}
	s.early = earlyPosition{tx: conn, pos: pos}
	return nil
}

var (
	lockOnly         = fixed("SELECT pg_advisory_xact_lock('threads'::regclass::oid::int, ?)")
	lockWithPosition = fixed(`SELECT ` + positionSQL + ` FROM (SELECT pg_advisory_xact_lock('threads'::regclass::oid::int, ?) OFFSET 0) locked`)
	// lockOnlyRow is lockOnly as a batch reads it: a row to scan.
	lockOnlyRow = fixed(`SELECT 1 FROM (SELECT pg_advisory_xact_lock('threads'::regclass::oid::int, ?) OFFSET 0) locked`)
	// lockOnlyRowGeneric and lockWithPositionGeneric are lockOnlyRow and
	// lockWithPosition setting a generic plan for the statements after
	// them (genericOnSQL): the parent's read, which ends it
	// (parentAheadRowRestoring).
	lockOnlyRowGeneric      = fixed(`SELECT ` + genericOnSQL + `, 1 FROM (SELECT pg_advisory_xact_lock('threads'::regclass::oid::int, ?) OFFSET 0) locked`)
	lockWithPositionGeneric = fixed(`SELECT ` + genericOnSQL + `, ` + positionSQL + ` FROM (SELECT pg_advisory_xact_lock('threads'::regclass::oid::int, ?) OFFSET 0) locked`)
)

// lockThreadBatched is lockThread in a pgAction: in one round trip, with
// BEGIN when it is the action's first, the lock (with the first log
// position and the message's id, when wanted: see lockThreadPG), the
// thread, and the parent the action asked for ahead (readParentAhead).
// Each statement passes GORM's callbacks first (passRow).
func lockThreadBatched(tx *gorm.DB, a *pgAction, id int64) (models.Thread, error) {
	var th models.Thread
	s, _ := tx.Statement.Context.Value(sinkKey{}).(*sink)
	early := s != nil && s.early.wanted && s.early.tx == nil
	ahead := s != nil && s.ahead != nil && s.ahead.thread == id && !s.ahead.sent
	var one, pos int64
	var lock batchRead
	var err error
	switch {
	case ahead && early:
		// The parent's read runs under a generic plan (genericPlan), which
		// the lock's statement sets and the read itself ends.
		lock, err = passRow(tx, lockWithPositionGeneric, positionsPerTx, int32(id))
		lock.scan = func(r pgx.Row) error { return r.Scan(nil, nil, &pos) }
	case ahead:
		lock, err = passRow(tx, lockOnlyRowGeneric, int32(id))
		lock.scan = func(r pgx.Row) error { return r.Scan(nil, nil, &one) }
	case early:
		// The message's id is not taken ahead (with the lock, it would save
		// the insert's round trip, but a refused reply would then leave a
		// gap in the message ids, which clients see: scripted
		// conversations name the messages they will make, msg_N in order).
		lock, err = passRow(tx, lockWithPosition, positionsPerTx, int32(id))
		lock.scan = func(r pgx.Row) error { return r.Scan(&pos) }
	default:
		lock, err = passRow(tx, lockOnlyRow, int32(id))
		lock.scan = func(r pgx.Row) error { return r.Scan(&one) }
	}
	if err != nil {
		return th, fmt.Errorf("lock thread: %w", err)
	}
	found := false
	row, err := passRow(tx, threadByID, id)
	if err != nil {
		return th, fmt.Errorf("lock thread: %w", err)
	}
	row.scan = func(r pgx.Row) error {
		err := scanKept(r, row.plans, threadFields(&th)...)
		found = err == nil
		return err
	}
	reads := []batchRead{lock, row}
	if ahead {
		parent, err := s.ahead.batchReads(tx)
		if err != nil {
			return th, fmt.Errorf("find parent: %w", err)
		}
		reads = append(reads, parent...)
	}
	if err := a.send(tx.Statement.Context, reads, false); err != nil {
		return th, fmt.Errorf("lock thread: %w", err)
	}
	if early {
		s.early = earlyPosition{tx: a, pos: pos}
	}
	if !found {
		return th, threadNotFound(id)
	}
	return th, nil
}

// wantEarlyPosition asks the next lockThread of tx's action, which must be
// its last, to take the first log position with the lock.
func wantEarlyPosition(tx *gorm.DB) {
	if s, ok := tx.Statement.Context.Value(sinkKey{}).(*sink); ok && s.early.tx == nil {
		s.early.wanted = true
	}
}

// earlyPosition is a log position taken ahead of nextSeq, for the one
// transaction that took it.
//
// Only a reply asks for one: taking a position gives the transaction its
// id, and a transaction with an id writes (and flushes) a commit record
// even if it wrote nothing else — a reply always writes, while an
// escalation or a confirm that finds nothing to do would pay an fsync for
// nothing.
type earlyPosition struct {
	wanted bool
	tx     gorm.ConnPool // the transaction (*sql.Tx or *pgAction); nil: none
	pos    int64
	used   bool
}

// takeEarlyPosition hands out the position lockThreadPG took, once, and
// only to the transaction that took it.
func takeEarlyPosition(tx *gorm.DB) (int64, bool) {
	s, ok := tx.Statement.Context.Value(sinkKey{}).(*sink)
	if !ok || s.early.tx == nil || s.early.used {
		return 0, false
	}
	if tx.Statement.ConnPool != s.early.tx {
		return 0, false
	}
	s.early.used = true
	return s.early.pos, true
}
