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
	Wait   string `json:"wait,omitempty"` // seconds to wait for an event (§13)
}

// EventPage answers get_events. Cursor always marks a position: pass it
// back as since to receive only newer events.
type EventPage struct {
	Events []Event `json:"events"`
	Cursor string  `json:"cursor"`
}

// Events lists events in order of occurrence, of one thread or of all,
// after escalating the turns that are due (guard profile). Only settled
// positions are returned (see settle), so polling with since never misses
// an event.
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
	if err := f.escalateDue(ctx, who); err != nil {
		return EventPage{}, err
	}
	var thread int64
	if q.Thread != "" {
		if thread, err = threadRef(q.Thread); err != nil {
			return EventPage{}, err
		}
		var n int64
		if err := f.db.WithContext(ctx).Model(&models.Thread{}).Where("id = ?", thread).Count(&n).Error; err != nil {
			return EventPage{}, fmt.Errorf("events: %w", err)
		}
		if n == 0 {
			return EventPage{}, threadNotFound(thread)
		}
	}
	wait, err := f.parseWait(q.Wait)
	if err != nil {
		return EventPage{}, err
	}
	out := EventPage{Events: []Event{}, Cursor: encodeCursor(since)}
	err = f.waiting(ctx, who, wait, f.hub.eventNews(), func(ctx context.Context) (bool, error) {
		ctx, cancel := context.WithTimeout(ctx, f.queryTimeout)
		defer cancel()
		var err error
		out, err = f.eventPage(ctx, thread, since, limit)
		return len(out.Events) > 0, err
	})
	if err != nil {
		return EventPage{}, err
	}
	return out, nil
}

// eventPage reads one page of events after the since position, of one
// thread or (thread 0) of all.
func (f *Forum) eventPage(ctx context.Context, thread, since int64, limit int) (EventPage, error) {
	var rows []models.Event
	keep, err := f.settle(ctx, func() ([]int64, error) {
		db := f.db.WithContext(ctx).Where("seq > ?", since)
		if thread != 0 {
			db = db.Where("thread_id = ?", thread)
		}
		var got []models.Event
		if err := db.Order("seq").Limit(limit).Find(&got).Error; err != nil {
			return nil, fmt.Errorf("events: %w", err)
		}
		rows = got
		pos := make([]int64, len(rows))
		for i, e := range rows {
			pos[i] = e.Seq
		}
		return pos, nil
	})
	if err != nil {
		return EventPage{}, err
	}
	rows = rows[:keep]
	out := EventPage{Events: make([]Event, len(rows)), Cursor: encodeCursor(since)}
	for i, e := range rows {
		out.Events[i] = eventShape(e)
	}
	if len(rows) > 0 {
		out.Cursor = encodeCursor(rows[len(rows)-1].Seq)
	}
	return out, nil
}
