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
}

// InboxItem is one thread awaiting the caller, with the message whose turn
// is open.
type InboxItem struct {
	Thread  Thread   `json:"thread"`
	Message *Message `json:"message"`
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
// hides nothing). For a human or a lock holder it also lists the threads
// that escalated (§14 rule 4), whoever they await, until their turn moves.
//
// Reading: "hidden questions" are turns opened by the caller itself — by
// the identity with the given extension, or with no extension when none is
// given — since replying to them would be a self_reply. With an extension,
// turns addressed to another extension of the same identity are hidden too.
//
// Reading: an escalated thread is in the inbox of humans and lock holders
// whatever its awaiting and the extension given, except that its turn is
// hidden from the ask's own author as every own question is: the asker
// knows it went unanswered, and the Overdue page shows it to all.
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
	if q.Extension != "" && !validName(q.Extension, f.limits.ExtensionMaxChars) {
		return Inbox{}, Refuse(InvalidBody, "extension must match [a-z0-9][a-z0-9._-]{0,%d}", f.limits.ExtensionMaxChars-1).On("extension")
	}
	if err := f.escalateDue(ctx); err != nil {
		return Inbox{}, err
	}
	turns := func() *gorm.DB {
		return f.db.WithContext(ctx).Model(&models.Thread{}).
			Joins("JOIN messages turn ON turn.id = threads.turn_message_id").
			Where("threads.turn_seq > ?", since).
			Where("threads.record_state NOT IN ?", terminalStates()).
			Where("NOT (turn.author_identity = ? AND turn.author_extension = ?)", who.Identity, q.Extension)
	}
	awaited := turns().Where("threads.awaiting_identity IN ?", []string{who.Identity, "*"})
	if q.Extension != "" {
		awaited = awaited.Where("NOT (threads.awaiting_identity = ? AND threads.awaiting_extension NOT IN ?)", who.Identity, []string{"", q.Extension})
	}
	var threads []models.Thread
	if err := awaited.Order("threads.turn_seq").Limit(limit).Find(&threads).Error; err != nil {
		return Inbox{}, fmt.Errorf("inbox: %w", err)
	}
	if who.Human() || who.LockHolder() {
		var escalated []models.Thread
		err := turns().Where("threads.escalated_at IS NOT NULL").Order("threads.turn_seq").Limit(limit).Find(&escalated).Error
		if err != nil {
			return Inbox{}, fmt.Errorf("inbox: escalated: %w", err)
		}
		threads = mergeTurns(threads, escalated, limit)
	}
	out := Inbox{Items: []InboxItem{}, Cursor: encodeCursor(since)}
	if len(threads) == 0 {
		return out, nil
	}
	msgs, err := f.messagesByID(ctx, threads)
	if err != nil {
		return Inbox{}, err
	}
	now := f.timestamp()
	for _, th := range threads {
		out.Items = append(out.Items, InboxItem{Thread: f.threadShape(th, now), Message: messageShape(msgs[th.TurnMessageID])})
	}
	out.Cursor = encodeCursor(threads[len(threads)-1].TurnSeq)
	return out, nil
}

// mergeTurns merges two lists ordered by turn_seq into the first limit
// distinct threads. Each list holds the first limit of its kind, so the
// merge holds the first limit of both together.
func mergeTurns(a, b []models.Thread, limit int) []models.Thread {
	out := make([]models.Thread, 0, min(limit, len(a)+len(b)))
	for len(out) < limit && (len(a) > 0 || len(b) > 0) {
		var next models.Thread
		if len(b) == 0 || len(a) > 0 && a[0].TurnSeq <= b[0].TurnSeq {
			next, a = a[0], a[1:]
		} else {
			next, b = b[0], b[1:]
		}
		if len(out) > 0 && out[len(out)-1].ID == next.ID {
			continue // in both lists: a turn_seq belongs to one thread
		}
		out = append(out, next)
	}
	return out
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
