package services

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"parley/models"
)

// InboxQuery is the inbox's input, as strings straight from the binding.
type InboxQuery struct {
	Extension string `json:"extension,omitempty"`
	Since     string `json:"since,omitempty"`
	Limit     string `json:"limit,omitempty"`
	Wait      string `json:"wait,omitempty"` // seconds to wait for a turn (§13)
}

// InboxItem is one thread awaiting the caller, with the message whose turn
// is open.
type InboxItem struct {
	Thread  Thread   `json:"thread"`
	Message *Message `json:"message"`

	position int64 // the turn's log position, for streams
}

// Inbox answers inbox. Cursor always marks a position: pass it back as
// since to receive only what is new.
type Inbox struct {
	Items  []InboxItem `json:"items"`
	Cursor string      `json:"cursor"`
}

// Inbox lists the threads awaiting a reply from the caller (PARLEY.md §8):
// those whose awaiting names the caller's identity or anyone, oldest turn
// first, never with a terminal state of record (§5.2: a pending proposal
// hides nothing).
//
// Reading: "hidden questions" are turns opened by the caller itself — by
// the identity with the given extension, or with no extension when none is
// given — since replying to them would be a self_reply. With an extension,
// turns addressed to another extension of the same identity are hidden too.
func (f *Forum) Inbox(ctx context.Context, who Caller, q InboxQuery) (Inbox, error) {
	if err := need(who, RightRead); err != nil {
		return Inbox{}, err
	}
	limit, err := f.pageSize(q.Limit)
	if err != nil {
		return Inbox{}, err
	}
	since, err := decodeCursor(q.Since, "since")
	if err != nil {
		return Inbox{}, err
	}
	if _, err := f.inboxScope(ctx, who, q.Extension); err != nil { // checks the extension
		return Inbox{}, err
	}
	wait, err := f.parseWait(q.Wait)
	if err != nil {
		return Inbox{}, err
	}
	out := Inbox{Items: []InboxItem{}, Cursor: encodeCursor(since)}
	err = f.waiting(ctx, wait, func(ctx context.Context) (bool, error) {
		var err error
		out, err = f.inboxPage(ctx, who, q.Extension, since, limit)
		return len(out.Items) > 0, err
	})
	if err != nil {
		return Inbox{}, err
	}
	return out, nil
}

// inboxPage reads one page of the inbox after the since position.
func (f *Forum) inboxPage(ctx context.Context, who Caller, extension string, since int64, limit int) (Inbox, error) {
	var threads []models.Thread
	keep, err := f.settle(ctx, func() ([]int64, error) {
		db, err := f.inboxScope(ctx, who, extension)
		if err != nil {
			return nil, err
		}
		threads = nil
		if err := db.Where("threads.turn_seq > ?", since).Order("threads.turn_seq").Limit(limit).Find(&threads).Error; err != nil {
			return nil, fmt.Errorf("inbox: %w", err)
		}
		pos := make([]int64, len(threads))
		for i, th := range threads {
			pos[i] = th.TurnSeq
		}
		return pos, nil
	})
	if err != nil {
		return Inbox{}, err
	}
	threads = threads[:keep]
	out := Inbox{Items: []InboxItem{}, Cursor: encodeCursor(since)}
	if len(threads) == 0 {
		return out, nil
	}
	turns, err := f.messagesByID(ctx, threads)
	if err != nil {
		return Inbox{}, err
	}
	for _, th := range threads {
		out.Items = append(out.Items, InboxItem{Thread: threadShape(th), Message: messageShape(turns[th.TurnMessageID]), position: th.TurnSeq})
	}
	out.Cursor = encodeCursor(threads[len(threads)-1].TurnSeq)
	return out, nil
}

// inboxScope selects the threads in the caller's inbox, as seen from one
// extension ("" for none).
func (f *Forum) inboxScope(ctx context.Context, who Caller, ext string) (*gorm.DB, error) {
	if ext != "" && !validName(ext, f.limits.ExtensionMaxChars) {
		return nil, Refuse(InvalidBody, "extension must match [a-z0-9][a-z0-9._-]{0,%d}", f.limits.ExtensionMaxChars-1).On("extension")
	}
	db := f.db.WithContext(ctx).Model(&models.Thread{}).
		Joins("JOIN messages turn ON turn.id = threads.turn_message_id").
		Where("threads.awaiting_identity IN ?", []string{who.Identity, "*"}).
		Where("threads.record_state NOT IN ?", []string{string(Closed), string(Deferred), string(Obsolete), string(Rejected)}).
		Where("NOT (turn.author_identity = ? AND turn.author_extension = ?)", who.Identity, ext)
	if ext != "" {
		db = db.Where("NOT (threads.awaiting_identity = ? AND threads.awaiting_extension NOT IN ?)", who.Identity, []string{"", ext})
	}
	return db, nil
}

// inboxCount counts the threads in the caller's inbox.
func (f *Forum) inboxCount(ctx context.Context, who Caller, ext string) (int, error) {
	db, err := f.inboxScope(ctx, who, ext)
	if err != nil {
		return 0, err
	}
	var n int64
	if err := db.Count(&n).Error; err != nil {
		return 0, fmt.Errorf("inbox count: %w", err)
	}
	return int(n), nil
}

func (f *Forum) messagesByID(ctx context.Context, threads []models.Thread) (map[int64]models.Message, error) {
	ids := make([]int64, len(threads))
	for i, th := range threads {
		ids[i] = th.TurnMessageID
	}
	var rows []models.Message
	if err := f.db.WithContext(ctx).Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("inbox messages: %w", err)
	}
	out := make(map[int64]models.Message, len(rows))
	for _, m := range rows {
		out[m.ID] = m
	}
	return out, nil
}
