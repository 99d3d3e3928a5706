package services

import (
	"context"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"parley/models"
)

// Unread is what is new in a thread for one human since their last visit
// of its page: messages others posted after the newest one they saw.
type Unread struct {
	Count   int    // messages by others after the last visit
	First   string // the oldest of them ("msg_N"), where to start reading
	Visited bool   // whether the human has ever shown the thread's page
}

// Visit records that who has seen thread up to its message lastSeen
// ("msg_N") and returns the message they had seen up to before ("" on a
// first visit), so the page can mark what is new to them. A visit never
// moves back: a page rendered from an older read does not unmark newer
// messages.
//
// Reading: "since their last visit" is counted in messages, by id, not in
// time: ids grow with every message, and a page knows the newest it showed.
// A message whose transaction committed after a later one's (PostgreSQL
// hands out ids before commit) can be missed as new; it still shows in the
// tree.
func (f *Forum) Visit(ctx context.Context, who Caller, thread, lastSeen string) (string, error) {
	if err := need(who, RightRead); err != nil {
		return "", err
	}
	id, err := threadRef(thread)
	if err != nil {
		return "", err
	}
	seen, ok := ParseMessageRef(lastSeen)
	if !ok {
		return "", Refuse(InvalidBody, "last seen must be a message key, \"msg_N\"").On("message")
	}
	var before string
	err = f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var prev []models.ThreadVisit
		if err := tx.Where("identity = ? AND thread_id = ?", who.Identity, id).Limit(1).Find(&prev).Error; err != nil {
			return err
		}
		if len(prev) == 1 {
			before = MessageKey(prev[0].LastMessageID)
		}
		row := models.ThreadVisit{Identity: who.Identity, ThreadID: id, LastMessageID: seen, VisitedAt: f.timestamp()}
		return tx.Clauses(clause.OnConflict{
			Columns: []clause.Column{{Name: "identity"}, {Name: "thread_id"}},
			DoUpdates: clause.Set{
				{Column: clause.Column{Name: "last_message_id"}, Value: gorm.Expr(
					"CASE WHEN excluded.last_message_id > thread_visits.last_message_id THEN excluded.last_message_id ELSE thread_visits.last_message_id END")},
				{Column: clause.Column{Name: "visited_at"}, Value: gorm.Expr("excluded.visited_at")},
			},
		}).Create(&row).Error
	})
	if err != nil {
		return "", fmt.Errorf("visit: %w", err)
	}
	return before, nil
}

// UnreadIn answers, in one query, what is unread for who in each of the
// threads ("th_N"): threads with nothing unread are left out of the map.
// A thread never visited counts every message by others as unread.
func (f *Forum) UnreadIn(ctx context.Context, who Caller, threads []string) (map[string]Unread, error) {
	if v, err, ok := onStandby(f, who, func(r *Forum) (map[string]Unread, error) { return r.UnreadIn(ctx, who, threads) }); ok {
		return v, err
	}
	if err := need(who, RightRead); err != nil {
		return nil, err
	}
	ids, err := threadRefs(threads)
	if err != nil {
		return nil, err
	}
	out := map[string]Unread{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ThreadID int64
		Count    int
		First    int64
		Visited  bool
	}
	// messages_thread (thread_id, id) serves the range after each visit;
	// the visit is found by its primary key (identity, thread_id).
	err = f.db.WithContext(ctx).Raw(`
		SELECT m.thread_id AS thread_id, COUNT(*) AS count, MIN(m.id) AS first,
		       MAX(CASE WHEN v.thread_id IS NULL THEN 0 ELSE 1 END) = 1 AS visited
		FROM messages m
		LEFT JOIN thread_visits v ON v.identity = ? AND v.thread_id = m.thread_id
		WHERE m.thread_id IN ? AND m.id > COALESCE(v.last_message_id, 0) AND m.author_identity <> ?
		GROUP BY m.thread_id`, who.Identity, ids, who.Identity).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("unread: %w", err)
	}
	for _, r := range rows {
		out[ThreadKey(r.ThreadID)] = Unread{Count: r.Count, First: MessageKey(r.First), Visited: r.Visited}
	}
	return out, nil
}
