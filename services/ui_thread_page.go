package services

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"gorm.io/gorm"

	"parley/models"
)

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
	if v, err, ok := onStandby(f, who, func(r *Forum) (ThreadPageView, error) { return r.ThreadPage(ctx, who, thread, since) }); ok {
		return v, err
	}
	if err := need(who, RightRead); err != nil {
		return ThreadPageView{}, err
	}
	id, err := threadRef(thread)
	if err != nil {
		return ThreadPageView{}, err
	}
	// An escalation changes the thread's version, so the page refreshes.
	if err := f.escalateDue(ctx, who); err != nil {
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
	view, err := f.ReadThread(ctx, who, ThreadQuery{Thread: thread})
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
