package services

import (
	"context"
	"fmt"

	"parley/models"
)

// OverdueItem is one escalated thread for the web UI's Overdue page: the
// thread, the ask whose deadline passed, and who failed to answer it.
type OverdueItem struct {
	Thread  Thread
	Ask     *Message
	Awaited *Awaiting
}

// Overdue lists the escalated threads whose turn is still open, oldest
// deadline first (at most page_max), after escalating what is due.
func (f *Forum) Overdue(ctx context.Context, who Caller) ([]OverdueItem, error) {
	if v, err, ok := onStandby(f, who, func(r *Forum) ([]OverdueItem, error) { return r.Overdue(ctx, who) }); ok {
		return v, err
	}
	if err := need(who, RightRead); err != nil {
		return nil, err
	}
	if err := f.escalateDue(ctx, who); err != nil {
		return nil, err
	}
	var threads []models.Thread
	err := f.db.WithContext(ctx).Where("escalated_at IS NOT NULL").Where("record_state NOT IN ?", terminalStates()).
		Order("reply_by, id").Limit(f.limits.PageMax).Find(&threads).Error
	if err != nil {
		return nil, fmt.Errorf("overdue: %w", err)
	}
	asks := map[int64]models.Message{}
	if err := f.addTurnMessages(ctx, threads, asks); err != nil {
		return nil, err
	}
	now := f.timestamp()
	out := make([]OverdueItem, 0, len(threads))
	for _, th := range threads {
		out = append(out, OverdueItem{
			Thread:  f.threadShape(th, now),
			Ask:     messageShape(asks[th.TurnMessageID]),
			Awaited: awaitingOf(th.AwaitingIdentity, th.AwaitingExtension),
		})
	}
	return out, nil
}

// OverdueCount is how many threads wait past their deadline: the open
// turn's reply_by has passed and the thread has not ended. The navigation
// shows it; it reads, and escalates nothing.
func (f *Forum) OverdueCount(ctx context.Context, who Caller) (int, error) {
	if err := need(who, RightRead); err != nil {
		return 0, err
	}
	var n int64
	err := f.db.WithContext(ctx).Model(&models.Thread{}).
		Where("reply_by IS NOT NULL AND reply_by <= ?", f.timestamp()).
		Where("record_state NOT IN ?", terminalStates()).Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("overdue count: %w", err)
	}
	return int(n), nil
}
