// Package migrations holds Parley's schema as versioned, append-only SQL
// files, one folder per dialect, and applies them in order. A landed file is
// never edited: a change is a new file with the next number, in both folders,
// and a test checks that both dialects end with the same tables, columns and
// indexes.
package migrations

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

//go:embed postgres/*.sql sqlite/*.sql
var files embed.FS

// Migration is one schema version for one dialect.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// advisoryLock serializes concurrent migrators (several servers starting at
// once) on PostgreSQL. SQLite needs none: its transactions begin immediate.
const advisoryLock = 0x7061726c6579 // "parley"

// List returns the migrations of a dialect ("postgres" or "sqlite") in order.
func List(dialect string) ([]Migration, error) {
	names, err := fs.Glob(files, dialect+"/*.sql")
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("migrations: no files for dialect %q", dialect)
	}
	sort.Strings(names)
	out := make([]Migration, 0, len(names))
	for _, name := range names {
		base := strings.TrimSuffix(path.Base(name), ".sql")
		num, rest, ok := strings.Cut(base, "_")
		version, err := strconv.Atoi(num)
		// Versions only increase: a number may be missing while the branch
		// that holds it has not landed yet; apply checks each version on
		// its own, so it is applied when it arrives.
		if !ok || err != nil || version < 1 || (len(out) > 0 && version <= out[len(out)-1].Version) {
			return nil, fmt.Errorf("migrations: %s: want <version>_<name>.sql with a version above the previous file's", name)
		}
		body, err := files.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("migrations: read %s: %w", name, err)
		}
		out = append(out, Migration{Version: version, Name: rest, SQL: string(body)})
	}
	return out, nil
}

// Latest is the newest schema version this build knows.
func Latest(dialect string) (int, error) {
	list, err := List(dialect)
	if err != nil {
		return 0, err
	}
	return list[len(list)-1].Version, nil
}

// Up applies every migration the database lacks, each in its own
// transaction, and returns the versions it applied.
func Up(ctx context.Context, db *gorm.DB) ([]int, error) { return UpTo(ctx, db, math.MaxInt) }

// UpTo is Up stopping at a version; tests use it to build a database as an
// older release left it.
func UpTo(ctx context.Context, db *gorm.DB, version int) ([]int, error) {
	dialect := db.Dialector.Name()
	list, err := List(dialect)
	if err != nil {
		return nil, err
	}
	db = db.WithContext(ctx)
	if err := db.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL)`).Error; err != nil {
		return nil, fmt.Errorf("migrations: create schema_migrations: %w", err)
	}
	var applied []int
	for _, m := range list {
		if m.Version > version {
			break
		}
		done, err := apply(db, dialect, m)
		if err != nil {
			return applied, err
		}
		if done {
			applied = append(applied, m.Version)
		}
	}
	return applied, nil
}

// apply runs one migration unless another process already has.
func apply(db *gorm.DB, dialect string, m Migration) (bool, error) {
	done := false
	err := db.Transaction(func(tx *gorm.DB) error {
		if dialect == "postgres" {
			// A migration may rewrite a large table: it is not bound by the
			// statement and lock timeouts of ordinary requests.
			if err := tx.Exec("SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0").Error; err != nil {
				return fmt.Errorf("timeouts: %w", err)
			}
			if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", advisoryLock).Error; err != nil {
				return fmt.Errorf("lock: %w", err)
			}
		}
		var n int64
		if err := tx.Raw("SELECT COUNT(*) FROM schema_migrations WHERE version = ?", m.Version).Scan(&n).Error; err != nil {
			return fmt.Errorf("check: %w", err)
		}
		if n > 0 {
			return nil
		}
		if err := tx.Exec(m.SQL).Error; err != nil {
			return err
		}
		done = true
		return tx.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
			m.Version, m.Name, time.Now().UTC().Format(time.RFC3339)).Error
	})
	if err != nil {
		return false, fmt.Errorf("migrations: %04d_%s: %w", m.Version, m.Name, err)
	}
	return done, nil
}

// Current returns the highest version applied to the database (0 if none).
func Current(ctx context.Context, db *gorm.DB) (int, error) {
	// Not GORM's HasTable, which answers false for a driver error (a
	// pooler refusing a statement): "no schema" must mean no table.
	exists := "SELECT to_regclass('schema_migrations') IS NOT NULL"
	if db.Dialector.Name() == "sqlite" {
		exists = "SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
	}
	var has bool
	if err := db.WithContext(ctx).Raw(exists).Scan(&has).Error; err != nil {
		return 0, fmt.Errorf("migrations: current version: %w", err)
	}
	if !has {
		return 0, nil
	}
	var v *int
	if err := db.WithContext(ctx).Raw("SELECT MAX(version) FROM schema_migrations").Scan(&v).Error; err != nil {
		return 0, fmt.Errorf("migrations: current version: %w", err)
	}
	if v == nil {
		return 0, nil
	}
	return *v, nil
}

// RowSteps are the versions whose migration rewrites rows already stored
// (an UPDATE or DELETE of a table an earlier version made), and what each
// fills in. A bundle (services/store_bundle.go) written before such a
// version lacks what the step would have written, and import copies rows
// as they are: it refuses a bundle from before the last of these
// (services' checkImportable). TestRowStepsAreListed holds the list to the
// files.
var RowSteps = map[int]string{
	3: "the state of record (record_*), filled from the log",
}

// LastRowStep is the newest version in RowSteps.
func LastRowStep() int {
	last := 0
	for v := range RowSteps {
		last = max(last, v)
	}
	return last
}
