package migrations_test

import (
	"context"
	"sort"
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
	lite := describe(t, dbtest.Fresh(t, "sqlite"))
	pg := describe(t, dbtest.Fresh(t, "postgres"))
	if len(lite) == 0 {
		t.Fatal("sqlite schema is empty")
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

func describe(t *testing.T, db *gorm.DB) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	tables, err := db.Migrator().GetTables()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(tables)
	for _, table := range tables {
		if table == "sqlite_sequence" {
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
			out["column "+table+"."+c.Name()+nullability(nullable)] = true
		}
		indexes, err := db.Migrator().GetIndexes(table)
		if err != nil {
			t.Fatal(err)
		}
		for _, ix := range indexes {
			if isPrimary, _ := ix.PrimaryKey(); isPrimary {
				continue
			}
			out["index "+table+"."+ix.Name()] = true
		}
	}
	return out
}

func nullability(nullable bool) string {
	if nullable {
		return " null"
	}
	return " not null"
}
