package migrations_test

import (
	"context"
	"testing"

	"parley/migrations"
	"parley/migrations/dbtest"
	"parley/models"
)

// TestCurrentReportsDriverErrors: a database that cannot be read (here a
// closed pool; behind a pooler, a refused statement) is an error, never
// "no schema" (version 0), which sends an operator to migrate a database
// already at its latest version (issue 24). A database without the table
// is version 0.
func TestCurrentReportsDriverErrors(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			if v, err := migrations.Current(ctx, dbtest.Empty(t, dialect)); v != 0 || err != nil {
				t.Fatalf("an empty database: version %d, %v; want 0 and no error", v, err)
			}
			db, err := models.Open(dbtest.FreshURL(t, dialect))
			if err != nil {
				t.Fatal(err)
			}
			sqlDB, _ := db.DB()
			sqlDB.Close()
			if v, err := migrations.Current(ctx, db); err == nil {
				t.Fatalf("an unreadable database: version %d and no error", v)
			}
		})
	}
}
