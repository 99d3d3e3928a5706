package services_test

import (
	"context"
	"strings"
	"testing"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestInboxPlanWalksTheIndex reads the inbox's plan in a seeded forum of
// 5,000 threads all awaiting anyone: both databases walk threads_inbox in
// turn order and stop after a page, and neither sorts the threads awaiting
// anyone (docs/performance.md shows the same plan on a million
// messages).
func TestInboxPlanWalksTheIndex(t *testing.T) {
	for _, c := range []struct {
		dialect string
		want    []string
	}{
		{"postgres", []string{"Merge Append", "Index Scan using threads_inbox on threads", "awaiting_identity = $1"}},
		{"sqlite", []string{"SEARCH threads USING INDEX threads_inbox (awaiting_identity=? AND turn_seq>?)"}},
	} {
		t.Run(c.dialect, func(t *testing.T) {
			forum, _, ctx := seededPlanForum(t, c.dialect)
			plan, err := forum.ExplainInbox(ctx, services.Caller{Identity: "ainotes:reader"}, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range c.want {
				if !strings.Contains(plan, want) {
					t.Errorf("the inbox's plan lacks %q:\n%s", want, plan)
				}
			}
			// The branches' own ORDER BY is the index's order: PostgreSQL
			// merges them as they come, with no sort node; SQLite sorts
			// only what each branch returned (at most a page, "SCAN mine"
			// or "SCAN anyone"), never the threads it walked.
			lines := strings.Split(plan, "\n")
			for i, line := range lines {
				node := strings.TrimPrefix(strings.TrimSpace(line), "->  ")
				if strings.HasPrefix(node, "Sort  (") || strings.HasPrefix(node, "Incremental Sort") ||
					strings.Contains(line, "TEMP B-TREE") && (i == 0 || !strings.HasPrefix(lines[i-1], "SCAN ")) {
					t.Errorf("the inbox sorts what it walked:\n%s", plan)
				}
			}
		})
	}
}

// TestAddressedInboxPlanWalksOneRange reads the addressed inbox's plan
// (docs/protocol.md §8, errata 2) in a seeded forum of 5,000 threads
// awaiting anyone, one in a hundred of them re-addressed to the reader:
// both databases walk the reader's range of threads_inbox in turn order,
// stop after a page, sort nothing they walked, and never touch the range
// of the turns awaiting anyone (no second branch, no merge).
func TestAddressedInboxPlanWalksOneRange(t *testing.T) {
	for _, c := range []struct {
		dialect   string
		want, not []string
	}{
		{"postgres", []string{"Index Scan using threads_inbox on threads", "awaiting_identity = $1"}, []string{"Merge Append", "Append"}},
		{"sqlite", []string{"SEARCH threads USING INDEX threads_inbox (awaiting_identity=? AND turn_seq>?)"}, []string{"UNION ALL", "anyone", "MERGE"}},
	} {
		t.Run(c.dialect, func(t *testing.T) {
			forum, db, ctx := seededPlanForum(t, c.dialect)
			if err := db.Exec("UPDATE threads SET awaiting_identity = 'ainotes:reader' WHERE id % 100 = 0").Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Exec("ANALYZE").Error; err != nil {
				t.Fatal(err)
			}
			plan, err := forum.ExplainAddressedInbox(ctx, services.Caller{Identity: "ainotes:reader"}, false)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("plan:\n%s", plan)
			for _, want := range c.want {
				if !strings.Contains(plan, want) {
					t.Errorf("the addressed inbox's plan lacks %q:\n%s", want, plan)
				}
			}
			for _, not := range c.not {
				if strings.Contains(plan, not) {
					t.Errorf("the addressed inbox's plan has %q (a second range?):\n%s", not, plan)
				}
			}
			if strings.Count(plan, "threads_inbox") != 1 {
				t.Errorf("the addressed inbox walks threads_inbox more than once:\n%s", plan)
			}
			lines := strings.Split(plan, "\n")
			for i, line := range lines {
				node := strings.TrimPrefix(strings.TrimSpace(line), "->  ")
				if strings.HasPrefix(node, "Sort  (") || strings.HasPrefix(node, "Incremental Sort") ||
					strings.Contains(line, "TEMP B-TREE") && (i == 0 || !strings.HasPrefix(lines[i-1], "SCAN ")) {
					t.Errorf("the addressed inbox sorts what it walked:\n%s", plan)
				}
			}
		})
	}
}

// seededPlanForum is a fresh forum on dialect with 5,000 seeded threads of
// two messages each, which two identities wrote, analyzed by the seed: the
// plan tests' forum.
func seededPlanForum(t *testing.T, dialect string) (*services.Forum, *gorm.DB, context.Context) {
	t.Helper()
	db := dbtest.Fresh(t, dialect)
	forum, ctx := services.New(db, services.Config{}), context.Background()
	if err := forum.Seed(ctx, 5000, 2, nil); err != nil {
		t.Fatal(err)
	}
	return forum, db, ctx
}
