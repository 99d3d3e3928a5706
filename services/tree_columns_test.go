package services

import (
	"slices"
	"testing"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
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
