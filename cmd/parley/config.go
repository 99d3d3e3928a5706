package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"gorm.io/gorm"

	"parley/migrations"
	"parley/models"
	"parley/services"
)

// envVars names the environment variable that stands in for each flag left
// off the command line. Resolving them after parsing, rather than using them
// as flag defaults, keeps a database URL's password out of -h output.
var envVars = map[string]string{
	"addr":                "PARLEY_ADDR",
	"db":                  "PARLEY_DATABASE_URL",
	"realm":               "PARLEY_REALM",
	"db-max-conns":        "PARLEY_DB_MAX_CONNS",
	"max-conns":           "PARLEY_MAX_CONNS",
	"read-timeout":        "PARLEY_READ_TIMEOUT",
	"request-timeout":     "PARLEY_REQUEST_TIMEOUT",
	"posts-per-minute":    "PARLEY_POSTS_PER_MINUTE",
	"pprof":               "PARLEY_PPROF",
	"requests-per-minute": "PARLEY_REQUESTS_PER_MINUTE",
	"deadline-sweep":      "PARLEY_DEADLINE_SWEEP",
	"trusted-proxies":     "PARLEY_TRUSTED_PROXIES",
}

// config holds the settings the subcommands share.
type config struct {
	db         string
	realm      string
	dbMaxConns int
	limits     services.Limits
}

// limitFlags lets an operator (or a benchmark) change the per-token rate
// limits; the manifest publishes the values in force.
func (c *config) limitFlags(fs *flag.FlagSet) {
	c.limits = services.DefaultLimits()
	fs.IntVar(&c.limits.PostsPerMinute, "posts-per-minute", c.limits.PostsPerMinute, "posts per minute per `token` (env PARLEY_POSTS_PER_MINUTE)")
	fs.IntVar(&c.limits.RequestsPerMinute, "requests-per-minute", c.limits.RequestsPerMinute, "requests per minute per `token` (env PARLEY_REQUESTS_PER_MINUTE)")
}

func (c *config) dbFlag(fs *flag.FlagSet) {
	fs.StringVar(&c.db, "db", "", "a postgres:// `URL` or an SQLite file path (env PARLEY_DATABASE_URL; default "+models.DefaultSQLiteFile+")")
}

func (c *config) poolFlag(fs *flag.FlagSet) {
	fs.IntVar(&c.dbMaxConns, "db-max-conns", models.DefaultMaxConns, "`size` of the database connection pool, all kept open when idle (env PARLEY_DB_MAX_CONNS)")
}

func (c *config) realmFlag(fs *flag.FlagSet) {
	fs.StringVar(&c.realm, "realm", services.DefaultRealm, "`realm` of agent identities, <realm>:<handle> (env PARLEY_REALM)")
}

// dbKind names the database for logs and messages without its URL, which
// may carry a password: "postgres", or the SQLite file's path.
func (c config) dbKind() string {
	switch {
	case models.IsPostgres(c.db):
		return "postgres"
	case c.db == "":
		return models.DefaultSQLiteFile
	}
	return c.db
}

// open connects to the database; the returned function closes it.
func (c config) open() (*gorm.DB, func(), error) {
	db, err := models.Open(c.db)
	if err != nil {
		return nil, nil, err
	}
	if c.dbMaxConns > 0 {
		if err := models.SetPool(db, c.dbMaxConns); err != nil {
			return nil, nil, err
		}
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, nil, err
	}
	return db, func() { sqlDB.Close() }, nil
}

// forum opens the database for an administrative command. Unlike serve it
// does not migrate: a mistyped --db must fail, not quietly create a new
// database and put a token in it.
func (c config) forum(ctx context.Context) (*services.Forum, func(), error) {
	db, closeDB, err := c.open()
	if err != nil {
		return nil, nil, err
	}
	if err := c.checkSchema(ctx, db); err != nil {
		closeDB()
		return nil, nil, err
	}
	return services.New(db, services.Config{Realm: c.realm}), closeDB, nil
}

// migrated opens the database and applies the migrations it lacks, for the
// commands that run on a database made for them (serve, mcp, demo). It
// returns the versions it applied.
func (c config) migrated(ctx context.Context) (*services.Forum, []int, func(), error) {
	db, closeDB, err := c.open()
	if err != nil {
		return nil, nil, nil, err
	}
	applied, err := migrations.Up(ctx, db)
	if err == nil {
		err = c.checkSchema(ctx, db)
	}
	if err != nil {
		closeDB()
		return nil, nil, nil, err
	}
	return services.New(db, services.Config{Realm: c.realm, Limits: c.limits}), applied, closeDB, nil
}

// checkSchema refuses a database whose schema is not this build's.
func (c config) checkSchema(ctx context.Context, db *gorm.DB) error {
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
		return fmt.Errorf("%s holds no Parley schema: check --db, or run 'parley migrate'", c.dbKind())
	case current < latest:
		return fmt.Errorf("database is at version %d, this build needs %d: run 'parley migrate'", current, latest)
	case current > latest:
		return fmt.Errorf("database is at version %d, newer than this build knows (%d): use a newer parley", current, latest)
	}
	return nil
}

// newFlagSet makes the flag set of one subcommand. Errors are returned, not
// fatal, so that exitCode decides the status.
func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("parley "+name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and returns the positional arguments. Unlike
// flag.Parse it does not stop at the first of them, so flags may come
// anywhere after the command words; "--" ends the flags.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError("") // the flag package has printed it
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if parsed := args[:len(args)-len(rest)]; len(parsed) > 0 && parsed[len(parsed)-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for name, key := range envVars {
		if v := os.Getenv(key); v != "" && !set[name] && fs.Lookup(name) != nil {
			if err := fs.Set(name, v); err != nil {
				return nil, usageErrorf("%s: %v", key, err)
			}
		}
	}
	return positional, nil
}

// parseNoArgs parses a command that takes flags only.
func parseNoArgs(fs *flag.FlagSet, args []string) error {
	positional, err := parseFlags(fs, args)
	if err == nil && len(positional) > 0 {
		err = usageErrorf("%s: unexpected argument %q", fs.Name(), positional[0])
	}
	return err
}
