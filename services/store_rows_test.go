package services

import (
	"slices"
	"testing"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/models"
)

// TestTreeColumnsAreEveryColumn: the hand-written scan of thread trees
// names every column of messages, or says it leaves it out, on both
// databases.
func TestTreeColumnsAreEveryColumn(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			cols, err := dbtest.Fresh(t, dialect).Migrator().ColumnTypes("messages")
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cols {
				if !slices.Contains(treeColumns, c.Name()) && !slices.Contains(treeColumnsLeftOut, c.Name()) {
					t.Errorf("column messages.%s is neither read by threadMessages nor left out on purpose", c.Name())
				}
			}
			for _, name := range treeColumns {
				if !slices.ContainsFunc(cols, func(c gorm.ColumnType) bool { return c.Name() == name }) {
					t.Errorf("threadMessages reads messages.%s, which does not exist", name)
				}
			}
		})
	}
}

// TestThreadColumnsAreEveryColumn: the hand-written scan and update of a
// thread's row (store_rows.go) name every column of threads, on both
// databases, in the model's order.
func TestThreadColumnsAreEveryColumn(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			db := dbtest.Fresh(t, dialect)
			cols, err := db.Migrator().ColumnTypes("threads")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range cols {
				names = append(names, c.Name())
			}
			slices.Sort(names)
			want := slices.Clone(threadColumns)
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Errorf("threads has columns %v; threadColumns names %v", names, want)
			}
			stmt := &gorm.Statement{DB: db}
			if err := stmt.Parse(&models.Thread{}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(stmt.Schema.DBNames, threadColumns) {
				t.Errorf("models.Thread's columns %v, threadColumns %v", stmt.Schema.DBNames, threadColumns)
			}
		})
	}
}
