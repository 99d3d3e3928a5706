package models

import (
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// DefaultSQLiteFile is the embedded database used when none is configured.
const DefaultSQLiteFile = "parley.db"

// Dialect names the database behind a *gorm.DB: "postgres" or "sqlite".
func Dialect(db *gorm.DB) string { return db.Dialector.Name() }

// IsPostgres reports whether url names a PostgreSQL database.
func IsPostgres(url string) bool {
	return strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://")
}

// Open connects to the database named by url: a postgres:// URL, or else the
// path of an SQLite file (DefaultSQLiteFile when url is empty), with its pool
// sized by DefaultMaxConns (SetPool changes it) and, on PostgreSQL, the
// session timeouts of sessionDefaults. Logs go to stderr, with query
// parameters elided so no secret reaches them.
func Open(url string) (*gorm.DB, error) {
	cfg := &gorm.Config{
		Logger: logger.New(log.New(os.Stderr, "", log.LstdFlags), logger.Config{
			SlowThreshold:             500 * time.Millisecond,
			LogLevel:                  logger.Warn,
			IgnoreRecordNotFoundError: true,
			ParameterizedQueries:      true,
		}),
		NowFunc:                func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) },
		SkipDefaultTransaction: true, // services open their own, one per action
		TranslateError:         true,
	}
	if IsPostgres(url) {
		db, err := gorm.Open(postgres.Open(withSessionDefaults(url)), cfg)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		return db, SetPool(db, DefaultMaxConns)
	}
	if url == "" {
		url = DefaultSQLiteFile
	}
	db, err := gorm.Open(sqlite.Open(sqliteDSN(url)), cfg)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", url, err)
	}
	return db, SetPool(db, DefaultMaxConns)
}

// sqliteDSN adds the settings Parley relies on. _txlock=immediate makes every
// transaction take the write lock when it begins: SQLite has no row locks
// (GORM drops FOR UPDATE there), so writers serialize instead of failing
// with SQLITE_BUSY halfway through. WAL lets readers run beside the writer.
func sqliteDSN(path string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + "_txlock=immediate&_pragma=busy_timeout(10000)" +
		"&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
}
