package migrations_test

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"gorm.io/gorm"

	"parley/migrations"
	"parley/migrations/dbtest"
)

func TestUpMigratesAFreshDatabaseToLatest(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			db := dbtest.Empty(t, dialect)
			ctx := context.Background()
			latest, err := migrations.Latest(dialect)
			if err != nil {
				t.Fatal(err)
			}
			list, err := migrations.List(dialect)
			if err != nil {
				t.Fatal(err)
			}
			applied, err := migrations.Up(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			if len(applied) != len(list) || applied[len(applied)-1] != latest {
				t.Fatalf("applied %v, want all %d versions up to %d", applied, len(list), latest)
			}
			if v, _ := migrations.Current(ctx, db); v != latest {
				t.Fatalf("current version %d, want %d", v, latest)
			}
			again, err := migrations.Up(ctx, db)
			if err != nil || len(again) != 0 {
				t.Fatalf("second Up applied %v (err %v), want nothing", again, err)
			}
		})
	}
}

// TestDialectsHaveTheSameSchema compares tables, columns and indexes after
// migrating both databases, so the two folders cannot drift apart.
func TestDialectsHaveTheSameSchema(t *testing.T) {
	lite, liteSearch := describe(t, dbtest.Fresh(t, "sqlite"))
	pg, pgSearch := describe(t, dbtest.Fresh(t, "postgres"))
	if len(lite) == 0 {
		t.Fatal("sqlite schema is empty")
	}
	// Each dialect has its own search index, and only its own.
	if want := []string{"column messages.search null", "index messages.messages_search", "table search_buckets"}; !equal(pgSearch, want) {
		t.Errorf("postgres search objects %v, want %v", pgSearch, want)
	}
	if want := []string{"table messages_search"}; !equal(liteSearch, want) {
		t.Errorf("sqlite search objects %v, want %v", liteSearch, want)
	}
	for key := range lite {
		if !pg[key] {
			t.Errorf("sqlite has %s, postgres does not", key)
		}
	}
	for key := range pg {
		if !lite[key] {
			t.Errorf("postgres has %s, sqlite does not", key)
		}
	}
}

// Full-text search is built differently by each database (migration
// 0006): PostgreSQL indexes a generated tsvector column, messages.search,
// with a GIN index, and files the words of its full buckets in
// search_buckets (migration 0020); SQLite keeps an FTS5 virtual table, messages_search,
// with the shadow tables FTS5 makes for itself (messages_search_data,
// _idx, _docsize, _config), filled by triggers. Both are the same feature
// and neither is data: describe sets them aside, so that the comparison
// stays meaningful for everything else, and reports them separately so
// that the test checks each dialect has its own.
func searchObject(key string) bool {
	return key == "column messages.search null" || key == "index messages.messages_search" ||
		key == "table messages_search" || strings.HasPrefix(key, "table messages_search_") || key == "table search_buckets"
}

// describe lists the schema's tables, columns and indexes, and apart from
// them its search objects (only the FTS5 table itself, not its shadows).
func describe(t *testing.T, db *gorm.DB) (map[string]bool, []string) {
	t.Helper()
	out := map[string]bool{}
	var search []string
	tables, err := db.Migrator().GetTables()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(tables)
	for _, table := range tables {
		if table == "sqlite_sequence" {
			continue
		}
		if searchObject("table " + table) {
			if table == "messages_search" || table == "search_buckets" {
				search = append(search, "table "+table)
			}
			continue
		}
		out["table "+table] = true
		cols, err := db.Migrator().ColumnTypes(table)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cols {
			nullable, _ := c.Nullable()
			if pk, _ := c.PrimaryKey(); pk {
				nullable = false // SQLite reports primary keys as nullable
			}
			key := "column " + table + "." + c.Name() + nullability(nullable)
			if searchObject(key) {
				search = append(search, key)
				continue
			}
			out[key] = true
		}
		names := map[string]bool{}
		for _, name := range indexNames(t, db, table) {
			names[name] = true
		}
		for _, name := range slices.Sorted(maps.Keys(names)) {
			key := "index " + table + "." + name
			if searchObject(key) {
				search = append(search, key)
				continue
			}
			out[key] = true
		}
	}
	sort.Strings(search)
	return out, search
}

// indexNames lists table's indexes but its primary key's, from the
// catalog: GORM's Migrator lists no index on an expression on PostgreSQL
// (messages_search, migration 0018), and on SQLite fails on one
// (messages_party_bodies, migration 0021: the index's column has no name).
// SQLite's own indexes for a key (sqlite_autoindex_*) are its primary
// keys' here.
func indexNames(t *testing.T, db *gorm.DB, table string) []string {
	t.Helper()
	q := `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name NOT LIKE 'sqlite_autoindex_%'`
	if db.Dialector.Name() == "postgres" {
		q = `SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			WHERE i.indrelid = CAST(? AS regclass) AND NOT i.indisprimary`
	}
	var names []string
	if err := db.Raw(q, table).Scan(&names).Error; err != nil {
		t.Fatal(err)
	}
	return names
}

func equal(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }

func nullability(nullable bool) string {
	if nullable {
		return " null"
	}
	return " not null"
}
