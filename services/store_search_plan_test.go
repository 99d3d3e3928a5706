package services_test

import (
	"context"
	"strings"
	"testing"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestSearchPlanUsesTheIndex reads the plans of searches in a seeded forum
// of 20,000 messages: the full-text index finds the matches of a rare
// word (the GIN index on PostgreSQL, the FTS5 table on SQLite); the big
// benchmark (docs/performance.md, Search) measures the same plans on a million.
func TestSearchPlanUsesTheIndex(t *testing.T) {
	for _, c := range []struct{ dialect, index string }{
		{"postgres", "Bitmap Index Scan on messages_search"},
		{"sqlite", "SCAN messages_search VIRTUAL TABLE INDEX"},
	} {
		t.Run(c.dialect, func(t *testing.T) {
			db := dbtest.Fresh(t, c.dialect)
			forum, ctx := services.New(db, services.Config{}), context.Background()
			if err := forum.Seed(ctx, 2000, 10, nil); err != nil {
				t.Fatal(err)
			}
			// As autovacuum would: statistics, and on PostgreSQL the GIN
			// index's pending list merged into the index.
			maintain := "ANALYZE"
			if c.dialect == "postgres" {
				maintain = "VACUUM ANALYZE messages"
			}
			if err := db.Exec(maintain).Error; err != nil {
				t.Fatal(err)
			}
			// A thread's number is in its ten messages only.
			for _, q := range []services.SearchQuery{
				{Q: "topic 1234"},
				{Q: "1234", Kind: "note", State: "open"},
			} {
				plan, err := forum.ExplainSearch(ctx, q, false)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(plan, c.index) {
					t.Fatalf("search %+v does not use the index:\n%s", q, plan)
				}
			}
		})
	}
}
