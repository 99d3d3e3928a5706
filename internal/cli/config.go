package cli

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"parley/migrations"
	"parley/models"
	"parley/services"
)

// Config holds the settings the subcommands share.
type Config struct {
	DB         string
	DBExecMode string        // pgx query mode, empty to choose (models.ExecModes)
	DBListen   string        // the LISTEN connection's URL, empty for DB
	DBRead     []string      // read replicas' URLs (--db-read-url)
	ReadMaxLag time.Duration // --db-read-max-lag
	Realm      string
	DBMaxConns int
	Limits     services.Limits
	Trusted    []services.TrustedKey // --trust-key, for serve and mcp
}

// TrustFlag adds --trust-key NAME=FILE, repeatable: a named key set (another
// forum's saved parley-keys.json, or one key) whose statements, cited as
// attestation evidence, show as signed by NAME (docs/protocol.md §15.6).
// The file is read once, at start: the server never fetches a key.
func (c *Config) TrustFlag(fs *flag.FlagSet) {
	fs.Func("trust-key", "trust the keys in `NAME=FILE` (a parley-keys.json or one key) for attestation evidence; repeatable", func(v string) error {
		name, file, ok := strings.Cut(v, "=")
		if !ok || name == "" || file == "" {
			return fmt.Errorf("want NAME=FILE, got %q", v)
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		k, err := services.ParseTrustedKey(name, raw)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		c.Trusted = append(c.Trusted, k)
		return nil
	})
}

// LimitFlags lets an operator (or a benchmark) change the per-token rate
// limits; the manifest publishes the values in force.
func (c *Config) LimitFlags(fs *flag.FlagSet) {
	c.defaultLimits()
	fs.IntVar(&c.Limits.PostsPerMinute, "posts-per-minute", c.Limits.PostsPerMinute, "posts per minute per `token` (env PARLEY_POSTS_PER_MINUTE)")
	fs.IntVar(&c.Limits.RequestsPerMinute, "requests-per-minute", c.Limits.RequestsPerMinute, "requests per minute per `token` (env PARLEY_REQUESTS_PER_MINUTE)")
}

// WitnessFlags lets an operator set the witness profile's policy
// (docs/protocol.md §15.3, §14 rule 1): the quorum of independent parties
// that verifies a claim, and how many of a party's recent bodies a
// template across threads is compared with. The defaults are the
// reference instance's, 2 and 50; every process of one forum (serve and
// mcp) should be given the same values.
func (c *Config) WitnessFlags(fs *flag.FlagSet) {
	c.defaultLimits()
	fs.Func("verify-quorum", fmt.Sprintf("verifications from distinct parties, none the claimant's, that make a claim verified: `N` ≥ 1, 1 for one seal alone (env PARLEY_VERIFY_QUORUM; default %d)", c.Limits.VerifyQuorum),
		func(v string) error { return atLeast(v, 1, &c.Limits.VerifyQuorum) })
	fs.Func("guard-recent-bodies-party", fmt.Sprintf("a party's last `N` bodies anywhere in the forum that a model's body must differ from, 0 for off (env PARLEY_GUARD_RECENT_BODIES_PARTY; default %d)", c.Limits.GuardRecentBodiesParty),
		func(v string) error { return atLeast(v, 0, &c.Limits.GuardRecentBodiesParty) })
}

func (c *Config) defaultLimits() {
	if c.Limits == (services.Limits{}) {
		c.Limits = services.DefaultLimits()
	}
}

// atLeast parses a whole number of at least least into dst.
func atLeast(v string, least int, dst *int) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < least {
		return fmt.Errorf("want a whole number of at least %d, got %q", least, v)
	}
	*dst = n
	return nil
}

// DBFlag adds --db and --db-exec-mode.
func (c *Config) DBFlag(fs *flag.FlagSet) {
	fs.StringVar(&c.DB, "db", "", "a postgres:// `URL` or an SQLite file path (env PARLEY_DATABASE_URL; default "+models.DefaultSQLiteFile+")")
	fs.Func("db-exec-mode", "pgx query `mode` on PostgreSQL: "+strings.Join(models.ExecModes, ", ")+
		" (env PARLEY_DB_EXEC_MODE; default the URL's default_query_exec_mode, else cache_statement on a direct connection and cache_describe through a pooler such as PgBouncer)",
		func(v string) error {
			if err := models.CheckExecMode(v); err != nil {
				return err
			}
			c.DBExecMode = v
			return nil
		})
}

// ListenFlag adds --db-listen-url, for the commands that wait for other
// processes' writes (serve, mcp).
func (c *Config) ListenFlag(fs *flag.FlagSet) {
	fs.Func("db-listen-url", "postgres:// `URL` of the LISTEN connection that wakes waiting reads: a direct or session-mode one when --db goes through a pooler in transaction mode (env PARLEY_DATABASE_LISTEN_URL; default --db)",
		func(v string) error {
			if v != "" && !models.IsPostgres(v) {
				return fmt.Errorf("want a postgres:// URL")
			}
			c.DBListen = v
			return nil
		})
}

// ListenURL is what the LISTEN connection connects to: --db-listen-url,
// else --db.
func (c Config) ListenURL() string {
	if c.DBListen != "" && models.IsPostgres(c.DB) {
		return c.DBListen
	}
	return c.DB
}

// ReadFlags adds --db-read-url (repeatable, or a comma-separated list) and
// --db-read-max-lag, for serve: the streaming standbys that serve the
// reads needing no log horizon (services/replicas.go).
func (c *Config) ReadFlags(fs *flag.FlagSet) {
	fs.Func("db-read-url", "postgres:// `URL` of a streaming standby (hot standby) of --db that serves read_thread, list_threads, search, claims and the pages' reads; repeatable or comma-separated (env PARLEY_DATABASE_READ_URL)",
		func(v string) error {
			for _, u := range strings.Split(v, ",") {
				if u = strings.TrimSpace(u); u == "" {
					continue
				}
				if !models.IsPostgres(u) {
					return fmt.Errorf("want postgres:// URLs")
				}
				c.DBRead = append(c.DBRead, u)
			}
			return nil
		})
	fs.DurationVar(&c.ReadMaxLag, "db-read-max-lag", services.DefaultReadMaxLag, "a standby replaying more than this `duration` behind --db leaves the rotation until it catches up (env PARLEY_DB_READ_MAX_LAG)")
}

// PoolFlag adds --db-max-conns, defaulting to size.
func (c *Config) PoolFlag(fs *flag.FlagSet, size int) {
	fs.IntVar(&c.DBMaxConns, "db-max-conns", size, "`size` of the database connection pool, all kept open when idle (env PARLEY_DB_MAX_CONNS)")
}

// RealmFlag adds --realm.
func (c *Config) RealmFlag(fs *flag.FlagSet) {
	fs.StringVar(&c.Realm, "realm", services.DefaultRealm, "`realm` of agent identities, <realm>:<handle> (env PARLEY_REALM)")
}

// DBKind names the database for logs and messages without its URL, which
// may carry a password: "postgres", or the SQLite file's path.
func (c Config) DBKind() string {
	switch {
	case models.IsPostgres(c.DB):
		return "postgres"
	case c.DB == "":
		return models.DefaultSQLiteFile
	}
	return c.DB
}

// Open connects to the database; the returned function closes it.
func (c Config) Open() (*gorm.DB, func(), error) {
	db, err := models.OpenWith(c.DB, models.Options{ExecMode: c.DBExecMode})
	if err != nil {
		return nil, nil, err
	}
	if c.DBMaxConns > 0 {
		if err := models.SetPool(db, c.DBMaxConns); err != nil {
			return nil, nil, err
		}
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, nil, err
	}
	return db, func() { sqlDB.Close() }, nil
}

// Forum opens the database for an administrative command. Unlike serve it
// does not migrate: a mistyped --db must fail, not quietly create a new
// database and put a token in it.
func (c Config) Forum(ctx context.Context) (*services.Forum, func(), error) {
	db, closeDB, err := c.Open()
	if err != nil {
		return nil, nil, err
	}
	if err := c.CheckSchema(ctx, db); err != nil {
		closeDB()
		return nil, nil, err
	}
	return services.New(db, services.Config{Realm: c.Realm}), closeDB, nil
}

// Migrated opens the database and applies the migrations it lacks, for the
// commands that run on a database made for them (serve, mcp, demo). It
// returns the versions it applied.
func (c Config) Migrated(ctx context.Context) (*services.Forum, []int, func(), error) {
	db, closeDB, err := c.Open()
	if err != nil {
		return nil, nil, nil, err
	}
	applied, err := migrations.Up(ctx, db)
	if err == nil {
		err = c.CheckSchema(ctx, db)
	}
	if err != nil {
		closeDB()
		return nil, nil, nil, err
	}
	standbys, closeReads, err := c.openStandbys()
	if err != nil {
		closeDB()
		return nil, nil, nil, err
	}
	closeAll := func() { closeReads(); closeDB() }
	return services.New(db, services.Config{Realm: c.Realm, Limits: c.Limits, TrustedKeys: c.Trusted,
		Standbys: standbys, ReadMaxLag: c.ReadMaxLag}), applied, closeAll, nil
}

// openStandbys connects to the read replicas. A standby that does not
// answer yet is no error: it joins the rotation when it does.
func (c Config) openStandbys() ([]services.Standby, func(), error) {
	if len(c.DBRead) > 0 && !models.IsPostgres(c.DB) {
		return nil, nil, Usagef("--db-read-url needs a PostgreSQL --db")
	}
	var out []services.Standby
	var (
		mu      sync.Mutex
		closers []func()
	)
	closeAll := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, f := range closers {
			f()
		}
	}
	for _, raw := range c.DBRead {
		name := "standby"
		if u, err := url.Parse(raw); err == nil {
			name = u.Host // no user, no password
		}
		open := func() (*gorm.DB, error) {
			db, err := models.OpenWith(raw, models.Options{ExecMode: c.DBExecMode})
			if err == nil && c.DBMaxConns > 0 {
				err = models.SetPool(db, c.DBMaxConns)
			}
			if err != nil {
				return nil, err
			}
			sqlDB, _ := db.DB()
			mu.Lock()
			closers = append(closers, func() { sqlDB.Close() })
			mu.Unlock()
			return db, nil
		}
		db, err := open()
		if err != nil {
			// Not fatal: the replica checks connect it once it answers.
			db = nil
		}
		out = append(out, services.Standby{Name: name, DB: db, Open: open})
	}
	return out, closeAll, nil
}

// CheckSchema refuses a database whose schema is not this build's.
func (c Config) CheckSchema(ctx context.Context, db *gorm.DB) error {
	current, err := migrations.Current(ctx, db)
	if err != nil {
		return err
	}
	latest, err := migrations.Latest(models.Dialect(db))
	if err != nil {
		return err
	}
	switch {
	case current == 0:
		return fmt.Errorf("%s holds no Parley schema: check --db, or run 'parley migrate'", c.DBKind())
	case current < latest:
		return fmt.Errorf("database is at version %d, this build needs %d: run 'parley migrate'", current, latest)
	case current > latest:
		return fmt.Errorf("database is at version %d, newer than this build knows (%d): use a newer parley", current, latest)
	}
	return nil
}
