package services

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
)

// TestSearchBucketsFindTheNewestMatches compares the candidates PostgreSQL's
// search selects (the newest messages backwards, then bucket by bucket
// from the index: searchCandidatesSQL) with the newest matches read the
// plain way, on a forum of 50,000 messages, four buckets, where "vintage"
// is only in the oldest 25,000: for a word in every message, in a tenth,
// in one thread, absent from the newest messages, a phrase and a word
// found nowhere, some of one kind or in threads of one state, with as many candidates as cross the newest part's edge
// and bucket edges; and the same in one part (buckets unset), as a word
// the planner knows to be rare is read.
func TestSearchBucketsFindTheNewestMatches(t *testing.T) {
	db := dbtest.Fresh(t, "postgres")
	f, ctx := New(db, Config{}), context.Background()
	if err := f.SeedWith(ctx, SeedPlan{Threads: 5000, PerThread: 10, OldWord: "vintage", OldThreads: 2500}); err != nil {
		t.Fatal(err)
	}
	// A seventh of the threads answered, for a filter on the state.
	if err := db.Exec("UPDATE threads SET state = 'answered' WHERE id % 7 = 0").Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("VACUUM ANALYZE messages").Error; err != nil {
		t.Fatal(err)
	}
	// The same candidates before the buckets are sealed, and after: three
	// full buckets, of which the newest does not hold "vintage".
	compareSearchCandidates(t, db)
	chooses(t, db, "vintage", searchFilter{kind: "ask"}, false) // nothing sealed: nothing known of the newest
	sealUntilDone(t, f)
	var holding []int
	if err := db.Raw("SELECT bucket FROM search_buckets WHERE words @@ 'vintage'::tsquery ORDER BY bucket").Scan(&holding).Error; err != nil {
		t.Fatal(err)
	}
	var sealed int
	if err := db.Raw("SELECT count(*) FROM search_buckets WHERE words IS NOT NULL").Scan(&sealed).Error; err != nil {
		t.Fatal(err)
	}
	if sealed != 3 || !slices.Equal(holding, []int{0, 1}) {
		t.Fatalf("%d buckets sealed, %v holding vintage; want 3, [0 1]", sealed, holding)
	}
	compareSearchCandidates(t, db)
	// Narrowed to a kind or a state, buckets are read for a word the
	// newest sealed bucket lacks, not for one it holds; never in a thread.
	chooses(t, db, "vintage", searchFilter{}, true)
	chooses(t, db, "seeded", searchFilter{}, true)
	chooses(t, db, "vintage", searchFilter{kind: "ask"}, true)
	chooses(t, db, "vintage", searchFilter{state: "open"}, true)
	chooses(t, db, "seeded", searchFilter{kind: "ask"}, false)
	chooses(t, db, "vintage", searchFilter{thread: 1}, false)
	chooses(t, db, "topic 17", searchFilter{}, false)
}

// chooses checks searchBuckets' choice for the query q.
func chooses(t *testing.T, db *gorm.DB, q string, filter searchFilter, want bool) {
	t.Helper()
	var got bool
	err := db.Transaction(func(tx *gorm.DB) (err error) {
		got, err = searchBuckets(tx, searchRequest{terms: parseTerms(q), filter: filter}, 2000)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("search %q %+v reads buckets: %v, want %v", q, filter, got, want)
	}
}

// sealUntilDone seals f's full buckets at once (no settling: nothing else
// writes), waiting for the transactions of other tests to end.
func sealUntilDone(t *testing.T, f *Forum) {
	t.Helper()
	for give := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		pending, err := f.sealSearchBuckets(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if !pending {
			return
		}
		if time.Now().After(give) {
			t.Fatal("a full bucket still waits to be sealed after a minute")
		}
	}
}

// compareSearchCandidates is the comparison of TestSearchBucketsFindTheNewestMatches.
func compareSearchCandidates(t *testing.T, db *gorm.DB) {
	t.Helper()
	ask, note := searchFilter{kind: "ask"}, searchFilter{kind: "note"}
	open, answered := searchFilter{state: "open"}, searchFilter{state: "answered"}
	for _, c := range []struct {
		q          string
		candidates int
		filter     searchFilter
	}{
		{"seeded", 20000, searchFilter{}}, {"seeded", 40000, searchFilter{}}, {"remark 7", 3000, searchFilter{}},
		{"vintage", 10000, searchFilter{}}, {"vintage", 30000, searchFilter{}}, {"vintage seeded", 2000, searchFilter{}},
		{`"which option"`, 4000, searchFilter{}}, {"topic 17", 2000, searchFilter{}}, {"zebra", 2000, searchFilter{}},
		{"vintage", 2000, ask}, {"vintage", 12000, note}, {"seeded", 3000, ask}, {"vintage", 20000, open},
		{"vintage", 2000, answered}, {"seeded", 5000, answered},
	} {
		for _, buckets := range []bool{true, false} {
			req := searchRequest{terms: parseTerms(c.q), filter: c.filter}
			tsq, tsqArgs := pgTSQuery(req.terms)
			var got, want []int64
			cands, args := searchCandidatesSQL(req, tsq, tsqArgs, c.candidates, buckets)
			// Without the sessions' 5 s statement timeout: this compares
			// results, and reading up to 40,000 candidates both ways took
			// over 5 s on a loaded machine (CI failed so once).
			err := db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Exec("SET LOCAL statement_timeout = 0").Error; err != nil {
					return err
				}
				if err := customPlan(tx); err != nil {
					return err
				}
				return tx.Raw("SELECT c.id FROM ("+cands+") c", args...).Scan(&got).Error
			})
			if err != nil {
				t.Fatal(err)
			}
			join, where, filterArgs := c.filter.sql()
			err = db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Exec("SET LOCAL statement_timeout = 0").Error; err != nil {
					return err
				}
				return tx.Raw("SELECT m.id FROM messages m"+join+" WHERE m.search @@ "+tsq+where+" ORDER BY m.id DESC LIMIT ?",
					append(append(tsqArgs, filterArgs...), c.candidates)...).Scan(&want).Error
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 && c.q != "zebra" {
				t.Fatalf("%q matches nothing: the seed is not as the test expects", c.q)
			}
			if !slices.Equal(got, want) {
				t.Errorf("search %q %+v, %d candidates, buckets %v: %d candidates, want %d (first %v, want %v)", c.q, c.filter, c.candidates, buckets, len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
			}
		}
	}
}

// TestSealWaitsForTheBucketsWriters holds a message of the first bucket
// uncommitted while a message past the bucket's end commits: the bucket is
// full, yet not sealed until that writer ends, and then its words include
// the late message's.
func TestSealWaitsForTheBucketsWriters(t *testing.T) {
	db := dbtest.Fresh(t, "postgres")
	f, ctx := New(db, Config{}), context.Background()
	if err := f.SeedWith(ctx, SeedPlan{Threads: 2, PerThread: 2}); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("SELECT setval('messages_id_seq', ?)", 1<<searchBucketShift-2).Error; err != nil {
		t.Fatal(err)
	}
	var cols, copied []string
	for _, c := range messageColumns[1:] {
		cols, copied = append(cols, c), append(copied, c)
		if c == "body" {
			copied[len(copied)-1] = "? || ' ' || body"
		}
	}
	insert := "INSERT INTO messages (" + strings.Join(cols, ", ") + ") SELECT " + strings.Join(copied, ", ") +
		" FROM messages WHERE id = (SELECT MIN(id) FROM messages) RETURNING id"
	late := db.Begin()
	defer late.Rollback()
	var lateID, nextID int64
	if err := late.Raw(insert, "straggler").Scan(&lateID).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Raw(insert, "punctual").Scan(&nextID).Error; err != nil {
		t.Fatal(err)
	}
	if lateID>>searchBucketShift != 0 || nextID>>searchBucketShift != 1 {
		t.Fatalf("ids %d and %d: want the last of bucket 0 and the first of bucket 1", lateID, nextID)
	}
	for range 3 {
		pending, err := f.sealSearchBuckets(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		var sealed int
		if err := db.Raw("SELECT count(*) FROM search_buckets WHERE words IS NOT NULL").Scan(&sealed).Error; err != nil {
			t.Fatal(err)
		}
		if !pending || sealed != 0 {
			t.Fatalf("pending %v, %d buckets sealed while a writer of bucket 0 runs; want pending, none", pending, sealed)
		}
	}
	if err := late.Commit().Error; err != nil {
		t.Fatal(err)
	}
	sealUntilDone(t, f)
	var holds bool
	if err := db.Raw("SELECT words @@ 'straggler'::tsquery FROM search_buckets WHERE bucket = 0").Scan(&holds).Error; err != nil {
		t.Fatal(err)
	}
	if !holds {
		t.Fatal("bucket 0 was sealed without the word of its last message")
	}
}
