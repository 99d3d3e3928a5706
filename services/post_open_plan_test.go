package services_test

import (
	"regexp"
	"strings"
	"testing"

	"gorm.io/gorm"

	"parley/models"
	"parley/services"
)

// TestOpeningWritesFindTheirRowByIndex: the writes that name rows through
// their sequences (currval, volatile) must still find the thread by its
// primary key. `WHERE id = currval(…)` is evaluated per row, so the
// thread's update walked every thread: on the seeded forum of 100,000
// threads an opening ask took a third of a second, where the tests' small
// forums never showed it. With sequential scans priced out, each
// statement's plan must use an index or no scan at all.
func TestOpeningWritesFindTheirRowByIndex(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		if !models.IsPostgresDB(w.db) {
			return // PostgreSQL's statements
		}
		param := regexp.MustCompile(`\$(\d+)`)
		err := w.db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec("SET LOCAL enable_seqscan = off").Error; err != nil {
				return err
			}
			for _, sql := range services.OpeningWrites() {
				args := make([]any, len(param.FindAllString(sql, -1)))
				var lines []string
				if err := tx.Raw("EXPLAIN "+sql, args...).Scan(&lines).Error; err != nil {
					t.Fatalf("%v\n%s", err, sql)
				}
				plan := strings.Join(lines, "\n")
				if strings.Contains(plan, "Seq Scan") {
					t.Errorf("a write walks its table:\n%s\n%s", sql, plan)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
