package services

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"gorm.io/gorm"
)

// pgPunctuation is what the search index reads as spaces (see
// migrations/postgres/0006_search.sql); highlighting reads the body the
// same way, so that it finds the words the index found.
const pgPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// headlineOptions ask ts_headline for the whole body with every match
// marked.
const headlineOptions = "HighlightAll=true, StartSel=\x02, StopSel=\x03"

// searchIndexed is the expression messages_search indexes (migration
// 0018): a message's tsvector with its id's bucket appended as the lexeme
// "~<id >> 14>", which no query term can spell, so that a query term
// matches it exactly where it matches messages.search.
const searchIndexed = "(m.search || array_to_tsvector(ARRAY['~' || (m.id >> 14)::text]))"

// searchBucketShift is a bucket's size in the index, as a shift of the
// message id: 16,384 ids (migration 0018).
const searchBucketShift = 14

// searchNewest is how many of the newest messages a bucketed search walks
// backwards before it reads buckets from the index (searchCandidatesSQL):
// a word in a quarter of the messages or more finds a thousand there if
// it is spread evenly; a word absent from them costs a walk of 190 ns a
// message, against about 50 ns a message for a bucket's look in the index.
const searchNewest = 4096

// postgresSearchSQL is the search on PostgreSQL, in one statement: the
// newest candidates (see searchCandidatesSQL), ranked, paged after the
// cursor, and only the page's bodies highlighted.
func postgresSearchSQL(req searchRequest, candidates int, buckets bool) (string, []any) {
	tsq, tsqArgs := pgTSQuery(req.terms)
	var args []any
	headline := func(config string) string {
		args = append(append(append(args, pgPunctuation, strings.Repeat(" ", len(pgPunctuation))), tsqArgs...), headlineOptions)
		return "ts_headline('" + config + "', translate(b.body, ?, ?), " + tsq + ", ?)"
	}
	sql := "SELECT p.id, p.score, " + headline("simple") + ", " + headline("english") + " FROM (\n"
	args = append(args, tsqArgs...)
	sql += "  SELECT r.id, r.score FROM (\n    SELECT c.id, ts_rank(c.search, " + tsq + ") AS score FROM (\n"
	cands, candArgs := searchCandidatesSQL(req, tsq, tsqArgs, candidates, buckets)
	sql += cands + ") c) r\n"
	args = append(args, candArgs...)
	if req.after != nil {
		score := float32(req.after.score) // ts_rank is a real: compare as one
		sql += "  WHERE r.score < ? OR (r.score = ? AND r.id < ?)\n"
		args = append(args, score, score, req.after.id)
	}
	args = append(args, req.limit+1)
	sql += "  ORDER BY r.score DESC, r.id DESC LIMIT ?) p JOIN messages b ON b.id = p.id\nORDER BY p.score DESC, p.id DESC"
	return sql, args
}

// searchCandidatesSQL selects the newest candidates matches (id and
// search) of the query tsq.
//
// In one part, as before migration 0018, for a word the planner knows to
// be rare (buckets unset: see searchBuckets) or in one thread's or
// author's messages: the newest matches from the GIN index, or from the
// primary key backwards for a word in most messages, or from the filter's
// index — the planner weighs them from the index's statistics.
//
// For a word the planner thinks in most messages (buckets set), in two
// parts that a LIMIT stops as soon as it has enough: the newest 4,096
// messages (searchNewest) backwards by the primary key, then the older ones bucket by
// bucket, newest bucket first, each bucket's matches read from the GIN
// index (the word's lexeme and the bucket's, intersected inside the index)
// and the newest candidates of them sorted (a top-N sort: the first bucket
// that holds the word may hold 16,000 matches), a kind or a thread state
// checked in both parts. A word in most messages is found in the first part; a word
// absent from the newest messages, however common further back, costs a
// look at each bucket's lexeme instead of a read of each message (a
// backward walk read 588,000 messages at 1.6 M to meet one found only in
// the oldest million). The LIMIT takes the rows in the order they come —
// the first part's, sorted and all newer than the buckets', then each
// bucket's in turn, sorted within it — newest first throughout (a plan
// without parallel workers: see customPlan).
func searchCandidatesSQL(req searchRequest, tsq string, tsqArgs []any, candidates int, buckets bool) (string, []any) {
	join, where, filterArgs := req.filter.sql()
	var args []any
	if !buckets {
		args = append(append(args, tsqArgs...), filterArgs...)
		return "      SELECT m.id, m.search FROM messages m" + join + "\n      WHERE " + searchIndexed + " @@ " + tsq + where + "\n" +
			"      ORDER BY m.id DESC LIMIT ?", append(args, candidates)
	}
	shift := strconv.Itoa(searchBucketShift)
	// lo, the newest part's lower edge, is a scalar subquery (an InitPlan
	// the primary key's scan is bounded by), not a join: as a join's
	// filter it would not stop a backward walk at the edge.
	lo := "(SELECT COALESCE(MAX(id), 0) - " + strconv.Itoa(searchNewest) + " FROM messages)"
	sql := "      SELECT k.id, k.search FROM (\n" +
		"        (SELECT m.id, m.search FROM messages m" + join + "\n" +
		"          WHERE m.id > " + lo + " AND m.search @@ " + tsq + where + " ORDER BY m.id DESC LIMIT ?)\n"
	args = append(append(append(args, tsqArgs...), filterArgs...), candidates)
	// The bucket's lexeme is quoted for tsquery's input, as '~<bucket>';
	// a query without lexemes, which matches nothing, must not become the
	// bucket's lexeme alone.
	//
	// The buckets are looked in newest first, and of the sealed ones
	// (search_buckets holds their words: search_seal.go) only those whose
	// words hold every word of the query, phrases read as their words:
	// each is read once, the matching ones from search_buckets' own index
	// (search_buckets_holding, migration 0020).
	words, wordsArgs := pgTSQuery(unphrased(req.terms))
	sql += "        UNION ALL\n" +
		"        (SELECT x.id, x.search FROM (SELECT g.b FROM generate_series(" + lo + " >> " + shift + ", 0, -1) g(b)\n" +
		"            WHERE g.b NOT IN (SELECT bucket::bigint FROM search_buckets WHERE words IS NOT NULL)\n" +
		"               OR g.b IN (SELECT search_buckets_holding(" + words + ")::bigint)) b,\n" +
		"          LATERAL (SELECT m.id, m.search FROM messages m" + join + "\n" +
		"            WHERE " + searchIndexed + " @@ (" + tsq + " && ('''~' || b || '''')::tsquery) AND m.id + 0 <= " + lo + " AND numnode(" + tsq + ") > 0" + where + "\n" +
		"            ORDER BY m.id DESC LIMIT ?) x)\n" +
		"      ) k LIMIT ?"
	args = append(append(append(append(append(args, wordsArgs...), tsqArgs...), tsqArgs...), filterArgs...), candidates, candidates)
	return sql, args
}

func (f *Forum) searchPostgres(ctx context.Context, req searchRequest) ([]found, error) {
	var out []found
	err := f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		sql, args, err := planSearch(tx, req, f.limits.SearchCandidates)
		if err != nil {
			return err
		}
		rows, err := tx.Raw(sql, args...).Rows()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var hit found
			var score float32
			var simple, english string
			if err := rows.Scan(&hit.id, &score, &simple, &english); err != nil {
				return err
			}
			hit.score, hit.highlights = float64(score), []string{simple, english}
			out = append(out, hit)
		}
		return rows.Err()
	})
	return out, err
}

// planSearch sets tx up for the search (customPlan), chooses how it reads
// its candidates (searchBuckets) and returns its statement.
func planSearch(tx *gorm.DB, req searchRequest, candidates int) (string, []any, error) {
	if err := customPlan(tx); err != nil {
		return "", nil, err
	}
	buckets, err := searchBuckets(tx, req, candidates)
	if err != nil {
		return "", nil, err
	}
	sql, args := postgresSearchSQL(req, candidates, buckets)
	return sql, args, nil
}

// searchBuckets reports whether a search reads the older messages bucket
// by bucket (see searchCandidatesSQL): unless it is narrowed to a thread
// or an author (and, narrowed to a kind or a state, only if the newest
// sealed bucket lacks its words: absentFromNewest), when the planner
// expects the words in more than ten times as many messages as the search
// ranks and in at least a quarter of all messages — the words it would
// look for by walking the primary key backwards, on the assumption that
// they are spread evenly, which a word absent from the newest messages
// betrays. A rarer word is read as before: from the GIN index whole, or
// within the first few thousand messages walked. The estimates are the
// planner's own, from the statistics, in one EXPLAIN without ANALYZE.
func searchBuckets(tx *gorm.DB, req searchRequest, candidates int) (bool, error) {
	if req.filter.thread != 0 || req.filter.author != "" {
		return false, nil // their own indexes find their newest messages
	}
	tsq, tsqArgs := pgTSQuery(req.terms)
	var plan string
	err := tx.Raw("EXPLAIN (FORMAT JSON) SELECT 1 FROM messages m WHERE "+searchIndexed+" @@ "+tsq+" UNION ALL SELECT 1 FROM messages", tsqArgs...).Row().Scan(&plan)
	if err != nil {
		return false, err
	}
	var est []struct {
		Plan struct {
			Plans []struct {
				Rows float64 `json:"Plan Rows"`
			}
		}
	}
	if err := json.Unmarshal([]byte(plan), &est); err != nil || len(est) != 1 || len(est[0].Plan.Plans) != 2 {
		return false, fmt.Errorf("search estimate %q: %v", plan, err)
	}
	matches, all := est[0].Plan.Plans[0].Rows, est[0].Plan.Plans[1].Rows
	if matches <= 10*float64(candidates) || matches < all/4 {
		return false, nil
	}
	if req.filter.kind == "" && req.filter.state == "" {
		return true, nil
	}
	return absentFromNewest(tx, req)
}

// absentFromNewest reports whether the newest sealed bucket lacks some
// word of the search (search_buckets). A search narrowed to a kind or a
// thread state reads buckets only then: a bucket's look reads every
// message of it that holds the words to check the filter, where a walk
// back from the newest message stops at the candidates it needs, and is
// the cheaper of the two when the words are in the newest messages
// (a word in every message, of one kind: 36 ms against 8.5 ms).
func absentFromNewest(tx *gorm.DB, req searchRequest) (bool, error) {
	words, wordsArgs := pgTSQuery(unphrased(req.terms))
	var b struct{ Newest, Holding *int64 }
	err := tx.Raw("SELECT (SELECT MAX(bucket) FROM search_buckets WHERE words IS NOT NULL) AS newest, "+
		"(SELECT MAX(h) FROM search_buckets_holding("+words+") h) AS holding", wordsArgs...).Scan(&b).Error
	if err != nil {
		return false, err
	}
	return b.Newest != nil && (b.Holding == nil || *b.Holding < *b.Newest), nil
}

// customPlan has PostgreSQL plan the transaction's statements for their
// own arguments: a cached generic plan cannot tell a word found in every
// message from a word found in ten, and would read one of them the slow
// way.
//
// And without parallel workers: a search is a short query among many, and
// a parallel scan of the primary key looks cheap enough to the planner to
// be preferred over the index for a rare word. A filter on the thread's
// state looks each candidate's thread up by its key (a nested loop): a
// hash join would read every thread to find the states of a few.
//
// And without JIT compilation, which PostgreSQL starts when a statement's
// estimated cost passes jit_above_cost (100,000 by default) and which
// took 330–390 ms, against a search of a few milliseconds: the 1.6 M
// seed's searches are estimated at up to 50,000, and a larger forum's
// estimates grow with it.
func customPlan(tx *gorm.DB) error {
	return tx.Exec(`SET LOCAL plan_cache_mode = force_custom_plan; SET LOCAL max_parallel_workers_per_gather = 0;
		SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; SET LOCAL jit = off`).Error
}

// sqliteSearchSQL selects the newest candidates from the FTS5 index with
// their title and body highlighted; they are ranked in Go (see Search).
func sqliteSearchSQL(req searchRequest, candidates int) (string, []any) {
	join, where, filterArgs := req.filter.sql()
	sql := `SELECT m.id, highlight(messages_search, 0, char(2), char(3)), highlight(messages_search, 1, char(2), char(3))
		FROM messages_search JOIN messages m ON m.id = messages_search.rowid` + join + `
		WHERE messages_search MATCH ?` + where + `
		ORDER BY messages_search.rowid DESC LIMIT ?`
	return sql, append(append([]any{ftsMatch(req.terms)}, filterArgs...), candidates)
}

func (f *Forum) searchSQLite(ctx context.Context, req searchRequest) ([]found, error) {
	sql, args := sqliteSearchSQL(req, f.limits.SearchCandidates)
	rows, err := f.db.WithContext(ctx).Raw(sql, args...).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var all []found
	for rows.Next() {
		var hit found
		var title, body string
		if err := rows.Scan(&hit.id, &title, &body); err != nil {
			return nil, err
		}
		hit.score = float64(strings.Count(title, string(dbMarkOpen))) + 0.1*float64(strings.Count(body, string(dbMarkOpen)))
		hit.highlights = []string{body}
		all = append(all, hit)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sort.SliceStable(all, func(i, j int) bool {
		return searchCursor{all[i].score, all[i].id}.before(searchCursor{all[j].score, all[j].id})
	})
	var out []found
	for _, hit := range all {
		if req.after != nil && !req.after.before(searchCursor{hit.score, hit.id}) {
			continue
		}
		if out = append(out, hit); len(out) > req.limit {
			break
		}
	}
	return out, nil
}
