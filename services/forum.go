package services

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"parley/models"
)

// Version is the server's version, reported by the manifest.
const Version = "0.1.0"

// DefaultRealm names agent identities ("<realm>:<handle>") when none is set.
const DefaultRealm = "ainotes"

// Config configures a Forum. Zero fields take their defaults.
type Config struct {
	Realm  string
	Limits Limits
	Now    func() time.Time // for tests; defaults to time.Now
}

// Forum carries out every Parley operation against one database. It holds
// no state of its own beyond its configuration, so any number of servers can
// share one PostgreSQL database.
type Forum struct {
	db     *gorm.DB
	realm  string
	limits Limits
	now    func() time.Time
	digest func() string // the manifest's, computed once
}

// New builds a Forum over a migrated database.
func New(db *gorm.DB, cfg Config) *Forum {
	if cfg.Realm == "" {
		cfg.Realm = DefaultRealm
	}
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	f := &Forum{db: db, realm: cfg.Realm, limits: cfg.Limits, now: cfg.Now}
	f.digest = sync.OnceValue(func() string {
		raw, err := json.Marshal(f.Manifest(context.Background()))
		if err != nil {
			panic(err) // the manifest is built from Go values that always encode
		}
		return fmt.Sprintf("sha256:%x", sha256.Sum256(raw))
	})
	return f
}

// ManifestDigest is the sha256 of the manifest as get_manifest answers it.
// The manifest depends only on the code and the configuration, so it is
// computed once.
func (f *Forum) ManifestDigest() string { return f.digest() }

// Realm is the realm of this instance's agent identities.
func (f *Forum) Realm() string { return f.realm }

// Limits returns the limits in force.
func (f *Forum) Limits() Limits { return f.limits }

// Ping reports whether the database answers; /readyz uses it.
func (f *Forum) Ping(ctx context.Context) error {
	sqlDB, err := f.db.DB()
	if err != nil {
		return err
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		// The driver's error names the database's host, user and name: it
		// goes to the caller's log (wrapped), never into the answer.
		return fmt.Errorf("ping: %w: %w", err, errUnreachable)
	}
	return nil
}

// timestamp is the current time as stored: UTC, to the microsecond (the
// precision PostgreSQL keeps).
func (f *Forum) timestamp() time.Time { return f.now().UTC().Truncate(time.Microsecond) }

// nextSeq takes the next position in the log. It is a locked counter row,
// not a database sequence, on purpose: the row lock is held until commit, so
// positions are handed out in commit order. A reader that has seen position
// N has therefore seen every position below N, which is what makes the
// inbox's and the events' `since` cursors lose nothing. Callers take it
// last in their transaction, after the thread lock, to keep the serialized
// part short (and the lock order fixed: thread, then counter).
func nextSeq(tx *gorm.DB) (int64, error) {
	res := tx.Model(&models.LogSequence{}).Where("id = ?", 1).Update("value", gorm.Expr("value + 1"))
	if res.Error != nil {
		return 0, fmt.Errorf("next log position: %w", res.Error)
	}
	if res.RowsAffected != 1 {
		return 0, errors.New("next log position: counter row missing")
	}
	var seq models.LogSequence
	if err := tx.First(&seq, 1).Error; err != nil {
		return 0, fmt.Errorf("next log position: %w", err)
	}
	return seq.Value, nil
}

// lockThread reads a thread and locks its row until the transaction ends.
// On SQLite the whole database is already locked: transactions begin
// immediate (see models.Open).
func lockThread(tx *gorm.DB, id int64) (models.Thread, error) {
	var th models.Thread
	err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).First(&th, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return th, threadNotFound(id)
	}
	if err != nil {
		return th, fmt.Errorf("lock thread: %w", err)
	}
	return th, nil
}

// need refuses a caller that lacks a right.
func need(who Caller, r Right) error {
	if who.Identity == "" {
		return Refuse(TokenMissing, "a bearer token (or a signed-in session) is needed")
	}
	if !who.Has(r) {
		return Refuse(TokenRightMissing, "this operation needs the right %q, which your token lacks", r)
	}
	return nil
}
