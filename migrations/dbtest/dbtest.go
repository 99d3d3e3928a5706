// Package dbtest gives tests fresh, migrated databases: an SQLite file in the
// test's temporary folder, and a schema of its own on the PostgreSQL server
// named by PARLEY_TEST_DATABASE_URL. In CI (CI=true) a missing PostgreSQL
// fails the test instead of skipping it.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// PostgresURL returns the test server's URL, skipping the test when none is
// configured, or failing it in CI.
func PostgresURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv(EnvURL)
	if url == "" {
		testkit.Missing(t, "the PostgreSQL tests", EnvURL+" is not set (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)")
	}
	return url
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
