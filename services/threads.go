package services

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"parley/models"
)

// ThreadView answers read_thread: the thread and its tree of messages.
// Cursor and More are there only when the read asked for a part of the
// thread (ThreadQuery), so a plain read is what it always was.
type ThreadView struct {
	Thread   Thread     `json:"thread"`
	Messages []*Message `json:"messages"`
	Cursor   *string    `json:"cursor,omitempty" jsonschema_description:"Only when since, limit, branch or depth was given: the position of the last message returned (or since, unchanged, when none was); pass it back as since to read only newer messages."`
	More     *bool      `json:"more,omitempty" jsonschema_description:"Only when since, limit, branch or depth was given: true when limit left matching messages out; read on with since set to cursor."`
}

// ThreadPage answers list_threads.
type ThreadPage struct {
	Threads []Thread `json:"threads"`
	Cursor  *string  `json:"cursor" jsonschema:"nullable"`
}

// ListQuery is list_threads' input, as strings straight from the binding.
type ListQuery struct {
	State     string `json:"state,omitempty"`
	Confirmed string `json:"confirmed,omitempty"` // "false": only threads with a pending proposal; "true": none pending
	Cursor    string `json:"cursor,omitempty"`
	Limit     string `json:"limit,omitempty"`

	// The web UI's filter, beyond the protocol's list_threads.
	AwaitingMe bool `json:"-"` // only threads awaiting the caller (or anyone)
}

// ReadThread returns a thread with its messages nested by parent, each
// level in order of creation, or the part of them q asks for (see
// ThreadQuery). The tree is read in one query.
func (f *Forum) ReadThread(ctx context.Context, who Caller, q ThreadQuery) (ThreadView, error) {
	if v, err, ok := onStandby(f, who, func(r *Forum) (ThreadView, error) { return r.ReadThread(ctx, who, q) }); ok {
		return v, err
	}
	if err := need(who, RightRead); err != nil {
		return ThreadView{}, err
	}
	id, err := threadRef(q.Thread)
	if err != nil {
		return ThreadView{}, err
	}
	part, err := f.parsePart(q)
	if err != nil {
		return ThreadView{}, err
	}
	if err := f.escalateDue(ctx, who); err != nil {
		return ThreadView{}, err
	}
	th, rows, err := threadWithMessages(f.db.WithContext(ctx), id)
	if err != nil {
		return ThreadView{}, err
	}
	if part == nil {
		return ThreadView{Thread: f.threadShape(th, f.timestamp()), Messages: nest(rows)}, nil
	}
	return part.view(th, f.threadShape(th, f.timestamp()), rows)
}

// ThreadVersion names the state of everything read_thread answers for a
// thread: every write to the thread or its messages takes a new log
// position, its activity_seq. Bindings send it as an ETag, so a client's
// unchanged re-read costs one row instead of the tree.
func (f *Forum) ThreadVersion(ctx context.Context, who Caller, thread string) (string, error) {
	if v, err, ok := onStandby(f, who, func(r *Forum) (string, error) { return r.ThreadVersion(ctx, who, thread) }); ok {
		return v, err
	}
	if err := need(who, RightRead); err != nil {
		return "", err
	}
	id, err := threadRef(thread)
	if err != nil {
		return "", err
	}
	var seq int64
	if err := scanRow(f.db.WithContext(ctx).Raw("SELECT activity_seq FROM threads WHERE id = ?", id), &seq); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return "", threadNotFound(id)
		}
		return "", fmt.Errorf("thread version: %w", err)
	}
	return ThreadKey(id) + "." + strconv.FormatInt(seq, 36), nil
}

// nest builds the tree from messages in creation order: a parent always
// precedes its replies, so one pass suffices.
func nest(rows []models.Message) []*Message {
	byID := make(map[int64]*Message, len(rows))
	roots := []*Message{}
	for _, row := range rows {
		m := messageShape(row)
		m.Replies = []*Message{}
		byID[row.ID] = m
		if row.ParentID == nil || byID[*row.ParentID] == nil {
			roots = append(roots, m)
			continue
		}
		parent := byID[*row.ParentID]
		parent.Replies = append(parent.Replies, m)
	}
	return roots
}

// ListThreads pages through threads by most recent activity first,
// optionally only those in one state, and only those with (confirmed
// false) or without (true) a pending proposal.
//
// Reading: §2.1 gives list_threads state, cursor and limit. confirmed is
// this instance's addition, so that a lock holder or a human finds every
// proposal waiting for them in one call.
func (f *Forum) ListThreads(ctx context.Context, who Caller, q ListQuery) (ThreadPage, error) {
	if v, err, ok := onStandby(f, who, func(r *Forum) (ThreadPage, error) { return r.ListThreads(ctx, who, q) }); ok {
		return v, err
	}
	if err := need(who, RightRead); err != nil {
		return ThreadPage{}, err
	}
	limit, err := f.pageSize(q.Limit)
	if err != nil {
		return ThreadPage{}, err
	}
	before, err := decodeCursor(q.Cursor, "cursor")
	if err != nil {
		return ThreadPage{}, err
	}
	if err := f.escalateDue(ctx, who); err != nil {
		return ThreadPage{}, err
	}
	db := f.db.WithContext(ctx).Model(&models.Thread{})
	if q.State != "" {
		if !ValidState(State(q.State)) {
			return ThreadPage{}, Refuse(InvalidBody, "state must be one of %s", stateList()).On("state")
		}
		db = db.Where("state = ?", q.State)
	}
	if before > 0 {
		db = db.Where("activity_seq < ?", before)
	}
	if q.AwaitingMe {
		db = db.Where("awaiting_identity IN ?", []string{who.Identity, Anyone})
	}
	switch q.Confirmed {
	case "":
	case "false":
		db = db.Where("state_confirmed_at IS NULL")
	case "true":
		db = db.Where("state_confirmed_at IS NOT NULL")
	default:
		return ThreadPage{}, Refuse(InvalidBody, "confirmed must be true or false").On("confirmed")
	}
	var rows []models.Thread
	if err := db.Order("activity_seq DESC").Limit(limit + 1).Find(&rows).Error; err != nil {
		return ThreadPage{}, fmt.Errorf("list threads: %w", err)
	}
	page, now := ThreadPage{Threads: []Thread{}}, f.timestamp()
	for i, row := range rows {
		if i == limit {
			page.Cursor = optional(encodeCursor(rows[i-1].ActivitySeq))
			break
		}
		page.Threads = append(page.Threads, f.threadShape(row, now))
	}
	return page, nil
}

// pageSize reads a limit parameter: empty means the default.
func (f *Forum) pageSize(s string) (int, error) {
	if s == "" {
		return f.limits.page(0)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n == 0 {
		return 0, Refuse(InvalidBody, "limit must be a number between 1 and %d", f.limits.PageMax).On("limit")
	}
	return f.limits.page(n)
}
