package services

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"parley/models"
)

// How a key is kept (table idempotency_keys, migration 0013): one row per
// keyed post, written by the post's own transaction after its message, so
// the key commits with the message or not at all, and survives restarts
// and other servers like the message does.
//
// The race. Two posts with one key, on one server or two sharing the
// database, must store one message:
//
//   - lockKey serializes them first. On PostgreSQL it takes a
//     transaction-scoped advisory lock on the key, before any other lock
//     and before the transaction writes (an advisory lock gives it no
//     transaction id, which would disturb the order of log positions, see
//     lockThread); on SQLite every write transaction begins immediate, so
//     the whole database is locked already. The second post then reads the
//     first one's committed row and replays it; a post refused (rolled
//     back) leaves no row, and the next one with its key is carried out.
//   - The primary key (token_id, identity, idempotency_key) decides if the
//     lock ever did not: saveKey inserts with ON CONFLICT DO NOTHING, and
//     a post whose row was not inserted rolls back with errKeyTaken (on
//     PostgreSQL the insert waits for the other transaction's outcome);
//     Post then runs it once more, as the replay it now is.
//
// Expiry is a comparison in Go with the row's created_at: an expired row
// is ignored, replaced by the post that reuses its key (under the key's
// lock, after that post's other writes) and, for keys nobody reuses, by pruneKeys, at most once a
// keyPruneEvery per process, through the index on created_at.

// errKeyTaken: another transaction committed the key first.
var errKeyTaken = errors.New("idempotency key taken by a concurrent post")

var (
	lockKeyPG = fixed("SELECT pg_advisory_xact_lock('idempotency_keys'::regclass::oid::int, hashtext(?))")
	// lockKeyRow is lockKeyPG as a batch reads it: a row to scan.
	lockKeyRow = fixed("SELECT 1 FROM (SELECT pg_advisory_xact_lock('idempotency_keys'::regclass::oid::int, hashtext(?)) OFFSET 0) locked")
	readKeySQL = fixed(`SELECT envelope_hash, result, created_at FROM idempotency_keys
		WHERE token_id = ? AND identity = ? AND idempotency_key = ?`)
	dropKeySQL = fixed(`DELETE FROM idempotency_keys WHERE token_id = ? AND identity = ? AND idempotency_key = ? AND created_at <= ?`)
	saveKeySQL = fixed(`INSERT INTO idempotency_keys
		(token_id, identity, idempotency_key, envelope_hash, message_id, result, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (token_id, identity, idempotency_key) DO NOTHING`)
	pruneKeysSQL = fixed(`DELETE FROM idempotency_keys WHERE created_at < ?`)
)

// keyPruneEvery is how often a process deletes expired keys.
const keyPruneEvery = 10 * time.Minute

// priorKey locks the caller's key and reads its row: live is nil when there
// is none or only an expired one (stale), which saveKey then replaces.
// It writes nothing: a write would give the transaction its id before
// the locks that follow (see lockThread).
func priorKey(tx *gorm.DB, who Caller, key string, now time.Time) (live *storedKey, stale bool, err error) {
	s := scopeOf(who)
	var k storedKey
	var created any
	lockName := strconv.FormatInt(s.tokenID, 10) + "|" + s.identity + "|" + key
	switch a := actionOf(tx); {
	case a != nil:
		err = lockReadKey(tx, a, lockName, []any{s.tokenID, s.identity, key}, &k.hash, &k.result, &created)
	case models.IsPostgresDB(tx):
		if err := lockKeyPG.exec(tx, lockName).Error; err != nil {
			return nil, false, fmt.Errorf("lock idempotency key: %w", err)
		}
		fallthrough
	default:
		err = scanFixed(tx, readKeySQL, []any{s.tokenID, s.identity, key}, &k.hash, &k.result, &created)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read idempotency key: %w", err)
	}
	if k.createdAt, err = asTime(created); err != nil {
		return nil, false, fmt.Errorf("read idempotency key: %w", err)
	}
	if expired(k.createdAt, now) {
		return nil, true, nil
	}
	return &k, false, nil
}

// lockReadKey is priorKey's lock and read on a pgAction: one round trip,
// with BEGIN when it is the action's first statement; sql.ErrNoRows when
// the key has no row.
func lockReadKey(tx *gorm.DB, a *pgAction, lockName string, args []any, dest ...any) error {
	lock, err := passRow(tx, lockKeyRow, lockName)
	if err != nil {
		return fmt.Errorf("lock idempotency key: %w", err)
	}
	lock.scan = func(r pgx.Row) error { return r.Scan(nil) }
	read, err := passRow(tx, readKeySQL, args...)
	if err != nil {
		return err
	}
	found := false
	read.scan = func(r pgx.Row) error {
		err := scanKept(r, read.plans, dest...)
		found = err == nil
		return err
	}
	if err := a.send(tx.Statement.Context, []batchRead{lock, read}, false); err != nil {
		return err
	}
	if !found {
		return sql.ErrNoRows
	}
	return nil
}

// saveKey stores the key with the post's answer, in the post's
// transaction after its writes, first deleting the expired row it
// replaces (stale); errKeyTaken when another post holds the key.
func saveKey(tx *gorm.DB, who Caller, env Envelope, out Posted, stale bool, now time.Time) error {
	result, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("store idempotency key: %w", err)
	}
	id, ok := ParseMessageRef(out.Message.ID)
	if !ok {
		return fmt.Errorf("store idempotency key: message id %q", out.Message.ID)
	}
	s := scopeOf(who)
	// On a pgAction both writes go out with COMMIT (execLaterOr): an
	// insert that the key's primary key turned away then ends the action
	// with errKeyTaken there.
	if stale {
		_, err := dropKeySQL.execLater(tx, -1, s.tokenID, s.identity, env.IdempotencyKey, now.Add(-IdempotencyWindow))
		if err != nil {
			return fmt.Errorf("replace expired idempotency key: %w", err)
		}
	}
	rows, err := saveKeySQL.execLaterOr(tx, deferred{rows: 1, short: errKeyTaken},
		s.tokenID, s.identity, env.IdempotencyKey, envelopeHash(env), id, string(result), now)
	if err != nil {
		return fmt.Errorf("store idempotency key: %w", err)
	}
	if rows != 1 {
		return errKeyTaken
	}
	return nil
}

// pruneKeys deletes expired keys, at most once a keyPruneEvery in this
// process (Forum.keysPruned holds the Unix time of the last prune). It runs after the
// post committed, in a statement of its own, so that it never holds a post
// up; a failure is ignored: expired rows are ignored anyway, and the next
// prune takes them.
func (f *Forum) pruneKeys(ctx context.Context) {
	last, now := &f.keysPruned, f.timestamp()
	prev := last.Load()
	if now.Unix()-prev < int64(keyPruneEvery/time.Second) || !last.CompareAndSwap(prev, now.Unix()) {
		return
	}
	_ = pruneKeysSQL.exec(f.db.WithContext(ctx), now.Add(-IdempotencyWindow)).Error
}
