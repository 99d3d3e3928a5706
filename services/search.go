package services

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

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
// opening (docs/protocol.md §8.1), so a match in a title is a hit on the root
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
	if v, err, ok := onStandby(f, who, func(r *Forum) (SearchPage, error) { return r.Search(ctx, who, q) }); ok {
		return v, err
	}
	if err := need(who, RightRead); err != nil {
		return SearchPage{}, err
	}
	req, err := f.searchRequest(ctx, q)
	if err != nil {
		return SearchPage{}, err
	}
	var rows []found
	if models.IsPostgresDB(f.db) {
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
