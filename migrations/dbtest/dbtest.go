// Package dbtest gives tests fresh, migrated databases: an SQLite file in the
// test's temporary folder, and a schema of its own on the PostgreSQL server
// named by PARLEY_TEST_DATABASE_URL. In CI (CI=true) a missing PostgreSQL
// fails the test instead of skipping it.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/internal/testkit"
	"parley/migrations"
	"parley/models"
)

// EnvURL names the PostgreSQL server tests use.
const EnvURL = "PARLEY_TEST_DATABASE_URL"

// Each runs fn once per database as subtests "sqlite" and "postgres".
func Each(t *testing.T, fn func(t *testing.T, db *gorm.DB)) {
	t.Helper()
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) { fn(t, Fresh(t, dialect)) })
	}
}

// Fresh returns a new, migrated database of the dialect, removed when the
// test ends.
func Fresh(t testing.TB, dialect string) *gorm.DB {
	t.Helper()
	db := Empty(t, dialect)
	if _, err := migrations.Up(context.Background(), db); err != nil {
		t.Fatalf("migrate %s: %v", dialect, err)
	}
	return db
}

// Empty returns a new database of the dialect with no tables.
func Empty(t testing.TB, dialect string) *gorm.DB {
	t.Helper()
	return open(t, EmptyURL(t, dialect))
}

// EmptyURL makes a new database of the dialect with no tables and returns
// what --db takes to reach it, for tests that start a process.
func EmptyURL(t testing.TB, dialect string) string {
	t.Helper()
	if dialect == "sqlite" {
		return filepath.Join(t.TempDir(), "parley.db")
	}
	url := PostgresURL(t)
	admin := open(t, url)
	schema := "t_" + randomHex(8)
	if err := admin.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() { admin.Exec("DROP SCHEMA " + schema + " CASCADE") })
	return WithSearchPath(url, schema)
}

// FreshURL makes a new, migrated database of the dialect and returns what
// --db takes to reach it, for tests that open it more than once (as several
// server processes would).
func FreshURL(t testing.TB, dialect string) string {
	t.Helper()
	url := EmptyURL(t, dialect)
	if _, err := migrations.Up(context.Background(), open(t, url)); err != nil {
		t.Fatalf("migrate %s: %v", dialect, err)
	}
	return url
}

// Open opens a database made by EmptyURL or FreshURL; it is closed when the
// test ends.
func Open(t testing.TB, url string) *gorm.DB {
	t.Helper()
	return open(t, url)
}

// PostgresURL returns the URL of this test process's own database on the
// test server, skipping the test when none is configured, or failing it in
// CI.
//
// Each test binary gets a database of its own, made on first use, rather
// than schemas in the configured one: the log's horizon (services, store
// positions) is computed over the transactions in progress in the whole
// database, so a test in another package holding a write open (a frozen
// peer, a lock test) would hold back this package's feeds. go test runs
// packages side by side. Databases left by earlier runs (a test binary
// cannot drop its own at exit) are dropped once they are a few hours old.
func PostgresURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv(EnvURL)
	if url == "" {
		testkit.Missing(t, "the PostgreSQL tests", EnvURL+" is not set (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)")
	}
	own.once.Do(func() { own.url, own.err = processDatabase(url) })
	if own.err != nil {
		t.Fatalf("the test process's database: %v", own.err)
	}
	return own.url
}

// own is this test process's database (see PostgresURL).
var own struct {
	once sync.Once
	url  string
	err  error
}

// processDatabase makes a database for this process on the server of url
// and answers its URL; on the way it drops the databases of runs that
// ended hours ago (named ptest_<unix seconds>_<random>).
func processDatabase(raw string) (string, error) {
	u, err := neturl.Parse(raw)
	if err != nil {
		return "", err
	}
	admin, err := models.Open(raw)
	if err != nil {
		return "", err
	}
	if sqlDB, err := admin.DB(); err == nil {
		defer sqlDB.Close()
	}
	var old []string
	admin.Raw(`SELECT datname FROM pg_database WHERE datname LIKE 'ptest\_%'`).Scan(&old)
	for _, name := range old {
		var born int64
		if _, err := fmt.Sscanf(name, "ptest_%d_", &born); err == nil && time.Since(time.Unix(born, 0)) > 3*time.Hour {
			admin.Exec("DROP DATABASE IF EXISTS " + name)
		}
	}
	name := fmt.Sprintf("ptest_%d_%s", time.Now().Unix(), randomHex(4))
	if err := admin.Exec("CREATE DATABASE " + name).Error; err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// WithSearchPath adds a search_path runtime parameter to a PostgreSQL URL.
func WithSearchPath(url, schema string) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "search_path=" + schema
}

func open(t testing.TB, url string) *gorm.DB {
	t.Helper()
	db, err := models.Open(url)
	if err != nil {
		t.Fatalf("open %s database: %v", models.Dialect(db), err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	sqlDB.SetMaxOpenConns(20)
	t.Cleanup(func() { sqlDB.Close() })
	return db
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
