package models

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
)

// DefaultSQLiteFile is the embedded database used when none is configured.
const DefaultSQLiteFile = "parley.db"

// Dialect names the database behind a *gorm.DB: "postgres" or "sqlite".
func Dialect(db *gorm.DB) string { return db.Dialector.Name() }

// IsPostgresDB reports whether db is a PostgreSQL database (else SQLite).
func IsPostgresDB(db *gorm.DB) bool { return Dialect(db) == "postgres" }

// IsPostgres reports whether url names a PostgreSQL database.
func IsPostgres(url string) bool {
	return strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://")
}

// Options are the choices of OpenWith.
type Options struct {
	// ExecMode is the pgx query mode on PostgreSQL (see ExecModes); empty
	// means the URL's default_query_exec_mode, else chosen by the path.
	ExecMode string
}

// Open connects to the database named by url: a postgres:// URL, or else the
// path of an SQLite file (DefaultSQLiteFile when url is empty), with its pool
// sized by DefaultMaxConns (SetPool changes it) and, on PostgreSQL, the
// session settings of sessionSettings in every transaction. Logs go to
// slog's default logger (slogGORM), with query parameters elided so no
// secret reaches them.
func Open(url string) (*gorm.DB, error) { return OpenWith(url, Options{}) }

// OpenWith is Open with options.
func OpenWith(url string, o Options) (*gorm.DB, error) {
	cfg := &gorm.Config{
		Logger:                 slogGORM{},
		NowFunc:                func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) },
		SkipDefaultTransaction: true, // services open their own, one per action
		TranslateError:         true,
	}
	if IsPostgres(url) {
		sqlDB, _, err := openPostgres(url, o.ExecMode)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		db, err := gorm.Open(postgres.New(postgres.Config{Conn: sqlDB}), cfg)
		if err != nil {
			sqlDB.Close()
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		return db, SetPool(db, DefaultMaxConns)
	}
	if url == "" {
		url = DefaultSQLiteFile
	}
	if err := checkSQLitePath(url); err != nil {
		return nil, err
	}
	db, err := gorm.Open(&sqlite.Dialector{DriverName: sqliteGatedDriver(), DSN: sqliteDSN(url)}, cfg)
	if err != nil {
		// The driver reports a file it cannot open as "out of memory (14)"
		// (SQLITE_CANTOPEN): say what it means instead.
		return nil, fmt.Errorf("cannot open the SQLite database %s: check that the file can be created or written there", url)
	}
	return db, SetPool(db, DefaultMaxConns)
}

// checkSQLitePath explains the usual mistakes with an SQLite path before
// the driver turns them into an obscure error: a folder that does not
// exist, or a folder given where a file belongs. A "file:" URI or
// ":memory:" is left to the driver.
func checkSQLitePath(path string) error {
	if strings.HasPrefix(path, "file:") || strings.HasPrefix(path, ":memory:") {
		return nil
	}
	path, _, _ = strings.Cut(path, "?")
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return fmt.Errorf("cannot open the SQLite database %s: it is a folder; name a file, such as %s", path, filepath.Join(path, DefaultSQLiteFile))
	}
	dir := filepath.Dir(path)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return fmt.Errorf("cannot open the SQLite database %s: the folder %s does not exist", path, dir)
	}
	return nil
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
