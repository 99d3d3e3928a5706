package services

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gorm.io/gorm"

	"parley/models"
)

// SearchQuery is search's input, as strings straight from the binding.
type SearchQuery struct {
	Q      string `json:"q"`
	Thread string `json:"thread,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Author string `json:"author,omitempty"`
	State  string `json:"state,omitempty"`
	Cursor string `json:"cursor,omitempty"`
	Limit  string `json:"limit,omitempty"`
}

// Hit is one message that matches, in its thread, with a snippet of its
// body.
type Hit struct {
	Thread  Thread   `json:"thread"`
	Message *Message `json:"message"`
	Snippet string   `json:"snippet" jsonschema_description:"An excerpt of the message body (whitespace collapsed, at most about 160 characters, … where cut) with every match wrapped in « and »; a « or » of the body itself shows as ‹ or ›."`
}

// SearchPage answers search.
type SearchPage struct {
	Hits   []Hit   `json:"hits"`
	Cursor *string `json:"cursor" jsonschema:"nullable"`
}

// searchRequest is a search query read and checked.
type searchRequest struct {
	terms  []term
	filter searchFilter
	after  *searchCursor
	limit  int
}

// searchFilter narrows a search to one thread, kind, author or thread
// state.
type searchFilter struct {
	thread              int64
	kind, author, state string
}

// sql is the filter as a join and conditions on messages m (and threads t).
func (fl searchFilter) sql() (join, where string, args []any) {
	if fl.thread != 0 {
		where += " AND m.thread_id = ?"
		args = append(args, fl.thread)
	}
	if fl.kind != "" {
		where += " AND m.kind = ?"
		args = append(args, fl.kind)
	}
	if fl.author != "" {
		where += " AND m.author_identity = ?"
		args = append(args, fl.author)
	}
	if fl.state != "" {
		join = " JOIN threads t ON t.id = m.thread_id"
		where += " AND t.state = ?"
		args = append(args, fl.state)
	}
	return join, where, args
}

// found is a matching message: its score, and its body as the database
// highlighted it (one text per configuration on PostgreSQL).
type found struct {
	id         int64
	score      float64
	highlights []string
}

// Search finds the messages whose body (or, for a thread's root message,
// the thread's title) holds every word and phrase of q, best match first,
// optionally in one thread, of one kind, by one author, or in threads in
// one state.
//
// Reading: a hit is a message. A thread's title is its root message's
// opening (PARLEY.md §8.1), so a match in a title is a hit on the root
// message, ranked above the same words in a body.
//
// Reading: "best match first" ranks the newest SearchCandidates matches
// (limits.search_candidates): ranking every match of a word found in most
// messages would cost a read of all of them, and a search must stay fast
// on any forum. A narrower query or a filter reaches older messages. Ties
// go to the newer message, and the cursor names the last hit's score and
// message, so paging is stable.
//
// The score is the database's own: PostgreSQL's ts_rank (a title word
// weighs 1, a body word 0.1); on SQLite the same weights count the matches
// FTS5 highlights.
func (f *Forum) Search(ctx context.Context, who Caller, q SearchQuery) (SearchPage, error) {
	if err := need(who, RightRead); err != nil {
		return SearchPage{}, err
	}
	req, err := f.searchRequest(ctx, q)
	if err != nil {
		return SearchPage{}, err
	}
	var rows []found
	if models.Dialect(f.db) == "postgres" {
		rows, err = f.searchPostgres(ctx, req)
	} else {
		rows, err = f.searchSQLite(ctx, req)
	}
	if err != nil {
		return SearchPage{}, fmt.Errorf("search: %w", err)
	}
	page := SearchPage{Hits: []Hit{}}
	if len(rows) > req.limit {
		rows = rows[:req.limit]
		last := rows[len(rows)-1]
		page.Cursor = optional(encodeSearchCursor(searchCursor{last.score, last.id}))
	}
	if page.Hits, err = f.hits(ctx, rows); err != nil {
		return SearchPage{}, fmt.Errorf("search: %w", err)
	}
	return page, nil
}

// searchRequest reads and checks a query.
func (f *Forum) searchRequest(ctx context.Context, q SearchQuery) (searchRequest, error) {
	var req searchRequest
	text := strings.TrimSpace(q.Q)
	switch n := utf8.RuneCountInString(text); {
	case n == 0:
		return req, Refuse(InvalidBody, "q is required: the words to search for").On("q")
	case n > f.limits.SearchQueryMaxChars || !utf8.ValidString(text):
		return req, Refuse(InvalidBody, "q must be valid text of at most %d characters", f.limits.SearchQueryMaxChars).On("q")
	}
	if req.terms = parseTerms(text); len(req.terms) == 0 {
		return req, Refuse(InvalidBody, "q holds no word to search for: use letters or digits").On("q")
	}
	var err error
	if req.limit, err = f.pageSize(q.Limit); err != nil {
		return req, err
	}
	if req.after, err = decodeSearchCursor(q.Cursor); err != nil {
		return req, err
	}
	if q.Thread != "" {
		if req.filter.thread, err = threadRef(q.Thread); err != nil {
			return req, err
		}
		var n int64
		if err := f.db.WithContext(ctx).Model(&models.Thread{}).Where("id = ?", req.filter.thread).Count(&n).Error; err != nil {
			return req, fmt.Errorf("search: %w", err)
		}
		if n == 0 {
			return req, threadNotFound(req.filter.thread)
		}
	}
	if q.Kind != "" && !knownKind(Kind(q.Kind)) {
		return req, Refuse(InvalidBody, "kind must be one of the nine acts or a dialectic act").On("kind")
	}
	if q.State != "" && !ValidState(State(q.State)) {
		return req, Refuse(InvalidBody, "state must be one of %s", stateList()).On("state")
	}
	if utf8.RuneCountInString(q.Author) > identityMaxChars {
		return req, Refuse(InvalidBody, "author must be an identity of at most %d characters", identityMaxChars).On("author")
	}
	req.filter.kind, req.filter.author, req.filter.state = q.Kind, q.Author, q.State
	return req, nil
}

// identityMaxChars bounds an identity named in a query: a realm, a colon
// and a handle of at most 64 characters each.
const identityMaxChars = 129

// pgPunctuation is what the search index reads as spaces (see
// migrations/postgres/0006_search.sql); highlighting reads the body the
// same way, so that it finds the words the index found.
const pgPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// headlineOptions ask ts_headline for the whole body with every match
// marked.
const headlineOptions = "HighlightAll=true, StartSel=\x02, StopSel=\x03"

// postgresSearchSQL is the search on PostgreSQL, in one statement: the
// newest candidates from the GIN index (or, for a word in most messages,
// from the primary key backwards — the planner knows which from the index's
// statistics), ranked, paged after the cursor, and only the page's bodies
// highlighted.
func postgresSearchSQL(req searchRequest, candidates int) (string, []any) {
	tsq, tsqArgs := pgTSQuery(req.terms)
	join, where, filterArgs := req.filter.sql()
	var args []any
	headline := func(config string) string {
		args = append(append(append(args, pgPunctuation, strings.Repeat(" ", len(pgPunctuation))), tsqArgs...), headlineOptions)
		return "ts_headline('" + config + "', translate(b.body, ?, ?), " + tsq + ", ?)"
	}
	sql := "SELECT p.id, p.score, " + headline("simple") + ", " + headline("english") + " FROM (\n"
	args = append(args, tsqArgs...)
	sql += "  SELECT r.id, r.score FROM (\n    SELECT c.id, ts_rank(c.search, " + tsq + ") AS score FROM (\n"
	args = append(append(args, tsqArgs...), filterArgs...)
	sql += "      SELECT m.id, m.search FROM messages m" + join + "\n      WHERE m.search @@ " + tsq + where + "\n"
	args = append(args, candidates)
	sql += "      ORDER BY m.id DESC LIMIT ?) c) r\n"
	if req.after != nil {
		score := float32(req.after.score) // ts_rank is a real: compare as one
		sql += "  WHERE r.score < ? OR (r.score = ? AND r.id < ?)\n"
		args = append(args, score, score, req.after.id)
	}
	args = append(args, req.limit+1)
	sql += "  ORDER BY r.score DESC, r.id DESC LIMIT ?) p JOIN messages b ON b.id = p.id\nORDER BY p.score DESC, p.id DESC"
	return sql, args
}

func (f *Forum) searchPostgres(ctx context.Context, req searchRequest) ([]found, error) {
	var out []found
	err := f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := customPlan(tx); err != nil {
			return err
		}
		sql, args := postgresSearchSQL(req, f.limits.SearchCandidates)
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
func customPlan(tx *gorm.DB) error {
	return tx.Exec(`SET LOCAL plan_cache_mode = force_custom_plan; SET LOCAL max_parallel_workers_per_gather = 0;
		SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off`).Error
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

// hits reads the messages found and their threads, in the order found,
// and cuts each snippet.
func (f *Forum) hits(ctx context.Context, rows []found) ([]Hit, error) {
	out := []Hit{}
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.id
	}
	var msgs []models.Message
	if err := f.db.WithContext(ctx).Where("id IN ?", ids).Find(&msgs).Error; err != nil {
		return nil, err
	}
	byID := make(map[int64]models.Message, len(msgs))
	threadIDs := make([]int64, 0, len(msgs))
	for _, m := range msgs {
		byID[m.ID] = m
		threadIDs = append(threadIDs, m.ThreadID)
	}
	var threads []models.Thread
	if err := f.db.WithContext(ctx).Where("id IN ?", threadIDs).Find(&threads).Error; err != nil {
		return nil, err
	}
	threadByID := make(map[int64]models.Thread, len(threads))
	for _, th := range threads {
		threadByID[th.ID] = th
	}
	for _, r := range rows {
		m, ok := byID[r.id]
		if !ok {
			return nil, fmt.Errorf("message %d found but not read", r.id)
		}
		var mask []bool
		for _, h := range r.highlights {
			mask = orMasks(mask, markedRunes(m.Body, h))
		}
		out = append(out, Hit{Thread: f.threadShape(threadByID[m.ThreadID], f.timestamp()), Message: messageShape(m), Snippet: snippet(m.Body, mask)})
	}
	return out, nil
}

// searchCursor is where a page of hits ended: the last hit's score and
// message id.
type searchCursor struct {
	score float64
	id    int64
}

// before reports whether c comes before d in search order: higher score
// first, then the newer message.
func (c searchCursor) before(d searchCursor) bool {
	return c.score > d.score || (c.score == d.score && c.id > d.id)
}

// Search cursors are opaque to clients: "s1." and the base64 of
// "<score>|<message id>". The score is written exactly, so that the next
// page starts right after it.
const searchCursorPrefix = "s1."

func encodeSearchCursor(c searchCursor) string {
	raw := strconv.FormatFloat(c.score, 'g', -1, 64) + "|" + strconv.FormatInt(c.id, 10)
	return searchCursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func decodeSearchCursor(s string) (*searchCursor, error) {
	if s == "" {
		return nil, nil
	}
	bad := Refuse(InvalidBody, "cursor is not a search cursor this server issued; pass back the cursor string unchanged").On("cursor")
	rest, ok := strings.CutPrefix(s, searchCursorPrefix)
	if !ok {
		return nil, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return nil, bad
	}
	score, id, ok := strings.Cut(string(raw), "|")
	c := searchCursor{}
	var serr, ierr error
	c.score, serr = strconv.ParseFloat(score, 64)
	c.id, ierr = strconv.ParseInt(id, 10, 64)
	if !ok || serr != nil || ierr != nil || c.id < 1 || c.score < 0 || math.IsInf(c.score, 0) || math.IsNaN(c.score) {
		return nil, bad
	}
	return &c, nil
}

// ExplainSearch shows how the database carries out a search: PostgreSQL's
// EXPLAIN (with ANALYZE and BUFFERS when analyze is set) of the search
// statement, SQLite's query plan of its candidate query. For operators and
// benchmarks; it checks no right.
func (f *Forum) ExplainSearch(ctx context.Context, q SearchQuery, analyze bool) (string, error) {
	req, err := f.searchRequest(ctx, q)
	if err != nil {
		return "", err
	}
	var lines []string
	scan := func(tx *gorm.DB, sql string, args []any, col int) error {
		rows, err := tx.Raw(sql, args...).Rows()
		if err != nil {
			return err
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			for i := range vals {
				vals[i] = new(any)
			}
			if err := rows.Scan(vals...); err != nil {
				return err
			}
			lines = append(lines, fmt.Sprint(*vals[col].(*any)))
		}
		return rows.Err()
	}
	err = f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if models.Dialect(tx) != "postgres" {
			sql, args := sqliteSearchSQL(req, f.limits.SearchCandidates)
			return scan(tx, "EXPLAIN QUERY PLAN "+sql, args, 3)
		}
		if err := customPlan(tx); err != nil {
			return err
		}
		sql, args := postgresSearchSQL(req, f.limits.SearchCandidates)
		explain := "EXPLAIN "
		if analyze {
			explain = "EXPLAIN (ANALYZE, BUFFERS) "
		}
		return scan(tx, explain+sql, args, 0)
	})
	if err != nil {
		return "", fmt.Errorf("explain search: %w", err)
	}
	return strings.Join(lines, "\n"), nil
}
