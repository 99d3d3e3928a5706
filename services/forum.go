package services

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
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
	// QueryTimeout bounds each database round of a waiting read or a
	// stream; DefaultQueryTimeout when zero.
	QueryTimeout time.Duration
	// Heartbeat is how often streams show they are alive and long-lived
	// calls re-check their caller; DefaultHeartbeat (§13: 15 s) when zero.
	// Tests shorten it.
	Heartbeat time.Duration
	// TrustedKeys are the other forums' (or anyone's) keys whose DSSE
	// envelopes, cited as attestation evidence, show as signed
	// (docs/protocol.md §15.6).
	TrustedKeys []TrustedKey
	// Standbys are streaming read replicas of the database (PostgreSQL):
	// the reads that need no log horizon go to one in rotation
	// (replicas.go); ReadMaxLag is how far one may lag and stay in
	// rotation, DefaultReadMaxLag when zero. StartReplicas checks them.
	Standbys   []Standby
	ReadMaxLag time.Duration
}

// Forum carries out every Parley operation against one database. It holds
// no data of its own — only its configuration and the hub that wakes its
// waiting reads, which carries signals, never data — so any number of
// servers can share one PostgreSQL database.
type Forum struct {
	db           *gorm.DB
	realm        string
	limits       Limits
	now          func() time.Time
	hub          *hub // wakes this process's waiting reads (docs/protocol.md §13)
	queryTimeout time.Duration
	heartbeat    time.Duration // see Config.Heartbeat
	notify       chan notice   // to the notifier, once StartFeed runs on PostgreSQL
	listener     feedState     // the LISTEN connection's health (store_feed_check.go)
	digest       func() string // the manifest's, computed once
	keysPruned   atomic.Int64  // when this process last deleted expired idempotency keys (Unix seconds)
	streams      *localStreams // this process's streams, a cache of their rows (stream_local.go)
	revoked      *revocations  // this process's long-lived calls' tokens, re-checked together (store_revocations.go)
	fan          *fanout       // this process's woken waiting inboxes, served by one read (inbox_fanout.go)
	releases     *slotReleases // this process's waits' slots being released, in one statement (call_slots.go)
	keyIDs       atomic.Value  // []string: the signing keys' ids this process has seen (statement_keys.go)
	trusted      []TrustedKey  // keys whose statements count as signed (statement_trust.go)
	reads        *replicas     // the read replicas, nil without (replicas.go)
	primary      *Forum        // on a standby's view, the Forum that writes; nil on the primary
	gate         *turns        // turns at the pool, first come, first served (turns.go)
	leases       *rateLeases   // rate-limit units this process claimed ahead (rate_leases.go)
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
	if cfg.QueryTimeout <= 0 {
		cfg.QueryTimeout = DefaultQueryTimeout
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	f := &Forum{db: db, realm: cfg.Realm, limits: cfg.Limits, now: cfg.Now, hub: newHub(), streams: newLocalStreams(), revoked: newRevocations(), fan: &fanout{}, releases: &slotReleases{}, leases: &rateLeases{},
		queryTimeout: cfg.QueryTimeout, heartbeat: cfg.Heartbeat, trusted: cfg.TrustedKeys, gate: newTurns(db)}
	f.fan.round = f.fanRound
	f.hub.gather = f.fan
	f.digest = sync.OnceValue(func() string {
		raw, err := json.Marshal(f.Manifest(context.Background()))
		if err != nil {
			panic(err) // the manifest is built from Go values that always encode
		}
		return fmt.Sprintf("sha256:%x", sha256.Sum256(raw))
	})
	if len(cfg.Standbys) > 0 {
		f.reads = newReplicas(f, cfg.Standbys, cfg.ReadMaxLag)
	}
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
