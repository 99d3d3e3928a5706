package services

import (
	"context"
	"slices"
	"testing"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
)

// TestSearchBucketsFindTheNewestMatches compares the candidates PostgreSQL's
// search selects (the newest messages backwards, then bucket by bucket
// from the index: searchCandidatesSQL) with the newest matches read the
// plain way, on a forum of 50,000 messages, four buckets, where "vintage"
// is only in the oldest 25,000: for a word in every message, in a tenth,
// in one thread, absent from the newest messages, a phrase and a word
// found nowhere, with as many candidates as cross the newest part's edge
// and bucket edges; and the same in one part (buckets unset), as a word
// the planner knows to be rare is read.
func TestSearchBucketsFindTheNewestMatches(t *testing.T) {
	db := dbtest.Fresh(t, "postgres")
	f, ctx := New(db, Config{}), context.Background()
	if err := f.SeedWith(ctx, SeedPlan{Threads: 5000, PerThread: 10, OldWord: "vintage", OldThreads: 2500}); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("VACUUM ANALYZE messages").Error; err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q          string
		candidates int
	}{
		{"seeded", 20000}, {"seeded", 40000}, {"remark 7", 3000}, {"vintage", 10000}, {"vintage", 30000},
		{"vintage seeded", 2000}, {`"which option"`, 4000}, {"topic 17", 2000}, {"zebra", 2000},
	} {
		for _, buckets := range []bool{true, false} {
			req := searchRequest{terms: parseTerms(c.q)}
			tsq, tsqArgs := pgTSQuery(req.terms)
			var got, want []int64
			cands, args := searchCandidatesSQL(req, tsq, tsqArgs, c.candidates, buckets)
			err := db.Transaction(func(tx *gorm.DB) error {
				if err := customPlan(tx); err != nil {
					return err
				}
				return tx.Raw("SELECT c.id FROM ("+cands+") c", args...).Scan(&got).Error
			})
			if err != nil {
				t.Fatal(err)
			}
			err = db.Raw("SELECT m.id FROM messages m WHERE m.search @@ "+tsq+" ORDER BY m.id DESC LIMIT ?", append(tsqArgs, c.candidates)...).Scan(&want).Error
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 && c.q != "zebra" {
				t.Fatalf("%q matches nothing: the seed is not as the test expects", c.q)
			}
			if !slices.Equal(got, want) {
				t.Errorf("search %q, %d candidates, buckets %v: %d candidates, want %d (first %v, want %v)", c.q, c.candidates, buckets, len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
			}
		}
	}
}
