package services

import (
	"context"
	"fmt"

	"parley/models"
)

// EventsQuery is get_events' input, as strings straight from the binding.
type EventsQuery struct {
	Thread string `json:"thread,omitempty"`
	Since  string `json:"since,omitempty"`
	Limit  string `json:"limit,omitempty"`
}

// EventPage answers get_events. Cursor always marks a position: pass it
// back as since to receive only newer events.
type EventPage struct {
	Events []Event `json:"events"`
	Cursor string  `json:"cursor"`
}

// Events lists events in order of occurrence, of one thread or of all,
// after escalating the turns that are due (guard profile). Positions are
// handed out in commit order (see nextSeq), so polling with since never
// misses an event.
func (f *Forum) Events(ctx context.Context, who Caller, q EventsQuery) (EventPage, error) {
	if err := need(who, RightRead); err != nil {
		return EventPage{}, err
	}
	limit, err := f.pageSize(q.Limit)
	if err != nil {
		return EventPage{}, err
	}
	since, err := decodeCursor(q.Since, "since")
	if err != nil {
		return EventPage{}, err
	}
	if err := f.escalateDue(ctx); err != nil {
		return EventPage{}, err
	}
	db := f.db.WithContext(ctx).Where("seq > ?", since)
	if q.Thread != "" {
		id, err := threadRef(q.Thread)
		if err != nil {
			return EventPage{}, err
		}
		var n int64
		if err := f.db.WithContext(ctx).Model(&models.Thread{}).Where("id = ?", id).Count(&n).Error; err != nil {
			return EventPage{}, fmt.Errorf("events: %w", err)
		}
		if n == 0 {
			return EventPage{}, threadNotFound(id)
		}
		db = db.Where("thread_id = ?", id)
	}
	var rows []models.Event
	if err := db.Order("seq").Limit(limit).Find(&rows).Error; err != nil {
		return EventPage{}, fmt.Errorf("events: %w", err)
	}
	out := EventPage{Events: make([]Event, len(rows)), Cursor: encodeCursor(since)}
	for i, e := range rows {
		out.Events[i] = eventShape(e)
	}
	if len(rows) > 0 {
		out.Cursor = encodeCursor(rows[len(rows)-1].Seq)
	}
	return out, nil
}
