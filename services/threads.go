package services

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"gorm.io/gorm"

	"parley/models"
)

// ThreadView answers read_thread: the thread and its tree of messages.
type ThreadView struct {
	Thread   Thread     `json:"thread"`
	Messages []*Message `json:"messages"`
}

// ThreadPage answers list_threads.
type ThreadPage struct {
	Threads []Thread `json:"threads"`
	Cursor  *string  `json:"cursor" jsonschema:"nullable"`
}

// ListQuery is list_threads' input, as strings straight from the binding.
type ListQuery struct {
	State  string `json:"state,omitempty"`
	Cursor string `json:"cursor,omitempty"`
	Limit  string `json:"limit,omitempty"`

	// The web UI's filters, beyond the protocol's list_threads.
	AwaitingMe  bool `json:"-"` // only threads awaiting the caller (or anyone)
	Unconfirmed bool `json:"-"` // only threads whose state is a proposal
}

// ReadThread returns a thread with its messages nested by parent, each
// level in order of creation. The tree is read in one query.
func (f *Forum) ReadThread(ctx context.Context, who Caller, thread string) (ThreadView, error) {
	if err := need(who, RightRead); err != nil {
		return ThreadView{}, err
	}
	id, err := threadRef(thread)
	if err != nil {
		return ThreadView{}, err
	}
	if err := f.escalateDue(ctx); err != nil {
		return ThreadView{}, err
	}
	db := f.db.WithContext(ctx)
	var th models.Thread
	if err := db.First(&th, id).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return ThreadView{}, threadNotFound(id)
		}
		return ThreadView{}, fmt.Errorf("read thread: %w", err)
	}
	var rows []models.Message
	if err := db.Where("thread_id = ?", id).Order("id").Find(&rows).Error; err != nil {
		return ThreadView{}, fmt.Errorf("read thread: %w", err)
	}
	return ThreadView{Thread: f.threadShape(th, f.timestamp()), Messages: nest(rows)}, nil
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
// optionally only those in one state.
func (f *Forum) ListThreads(ctx context.Context, who Caller, q ListQuery) (ThreadPage, error) {
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
	if err := f.escalateDue(ctx); err != nil {
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
		db = db.Where("awaiting_identity IN ?", []string{who.Identity, "*"})
	}
	if q.Unconfirmed {
		db = db.Where("state_confirmed_at IS NULL")
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

// ThreadPageView is what the web UI shows of a thread: its tree, its
// events and its claims, with a version that changes whenever anything in
// it changes.
type ThreadPageView struct {
	ThreadView
	Events    []Event
	Claims    map[string]Claim // by id
	Version   string
	Unchanged bool // since named the current version: nothing else was read
}

// ThreadPage reads a thread for the web UI. When since equals the thread's
// current version it answers Unchanged at the cost of one row, which is
// what keeps the page's polling cheap.
func (f *Forum) ThreadPage(ctx context.Context, who Caller, thread, since string) (ThreadPageView, error) {
	if err := need(who, RightRead); err != nil {
		return ThreadPageView{}, err
	}
	id, err := threadRef(thread)
	if err != nil {
		return ThreadPageView{}, err
	}
	// An escalation changes the thread's version, so the page refreshes.
	if err := f.escalateDue(ctx); err != nil {
		return ThreadPageView{}, err
	}
	var th models.Thread
	if err := f.db.WithContext(ctx).Select("activity_seq").First(&th, id).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return ThreadPageView{}, threadNotFound(id)
		}
		return ThreadPageView{}, fmt.Errorf("thread page: %w", err)
	}
	version := strconv.FormatInt(th.ActivitySeq, 10)
	if since == version {
		return ThreadPageView{Version: version, Unchanged: true}, nil
	}
	view, err := f.ReadThread(ctx, who, thread)
	if err != nil {
		return ThreadPageView{}, err
	}
	events, err := f.Events(ctx, who, EventsQuery{Thread: thread, Limit: strconv.Itoa(f.limits.PageMax)})
	if err != nil {
		return ThreadPageView{}, err
	}
	claims, err := f.claimsOfThread(ctx, thread)
	if err != nil {
		return ThreadPageView{}, err
	}
	return ThreadPageView{ThreadView: view, Events: events.Events, Claims: claims, Version: version}, nil
}
