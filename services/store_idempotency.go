package services

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

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
	lockKeyPG  = fixed("SELECT pg_advisory_xact_lock('idempotency_keys'::regclass::oid::int, hashtext(?))")
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
	if models.IsPostgresDB(tx) {
		lockName := strconv.FormatInt(s.tokenID, 10) + "|" + s.identity + "|" + key
		if err := lockKeyPG.exec(tx, lockName).Error; err != nil {
			return nil, false, fmt.Errorf("lock idempotency key: %w", err)
		}
	}
	var k storedKey
	var created any
	err = scanFixed(tx, readKeySQL, []any{s.tokenID, s.identity, key}, &k.hash, &k.result, &created)
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
	if stale {
		err := dropKeySQL.exec(tx, s.tokenID, s.identity, env.IdempotencyKey, now.Add(-IdempotencyWindow)).Error
		if err != nil {
			return fmt.Errorf("replace expired idempotency key: %w", err)
		}
	}
	res := saveKeySQL.exec(tx, s.tokenID, s.identity, env.IdempotencyKey, envelopeHash(env), id, string(result), now)
	if res.Error != nil {
		return fmt.Errorf("store idempotency key: %w", res.Error)
	}
	if res.RowsAffected != 1 {
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
