package models

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"gorm.io/gorm"
)

// DefaultMaxConns is the connection pool's size unless configured. Every
// connection stays open while idle, so a loaded server does not open a new
// PostgreSQL connection per request; 16 per server process stays well
// inside PostgreSQL's default max_connections of 100 with a few processes.
const DefaultMaxConns = 16

// SetPool sizes db's pool: at most maxConns connections, all of which may
// stay idle, each closed after an idle half hour and recycled after an
// hour. maxConns < 1 means DefaultMaxConns.
func SetPool(db *gorm.DB, maxConns int) error {
	if maxConns < 1 {
		maxConns = DefaultMaxConns
	}
	sqlDB, err := db.DB()
	if err != nil {
		return fmt.Errorf("pool: %w", err)
	}
	sqlDB.SetMaxOpenConns(maxConns)
	sqlDB.SetMaxIdleConns(maxConns)
	sqlDB.SetConnMaxIdleTime(30 * time.Minute)
	sqlDB.SetConnMaxLifetime(time.Hour)
	return nil
}

// sessionDefaults are the PostgreSQL settings every connection starts with,
// unless the URL sets them: no statement waits for more than 5 s nor for a
// lock for more than 2 s, and no transaction idles for more than 30 s, so a
// stuck query or a forgotten transaction cannot pile up behind a lock.
// (A frozen server is bounded by the callers' context deadlines instead:
// it does not run its own timers.) Migrations lift statement_timeout for
// their own transactions.
var sessionDefaults = [][2]string{
	{"statement_timeout", "5s"},
	{"lock_timeout", "2s"},
	{"idle_in_transaction_session_timeout", "30s"},
}

// withSessionDefaults adds sessionDefaults to a postgres:// URL as runtime
// parameters (pgx sends unknown URL parameters to the server as settings).
func withSessionDefaults(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw // the driver reports the malformed URL itself
	}
	q := u.Query()
	for _, kv := range sessionDefaults {
		if !q.Has(kv[0]) && !strings.Contains(q.Get("options"), kv[0]) {
			q.Set(kv[0], kv[1])
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}
