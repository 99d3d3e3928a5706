package services

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"parley/models"
)

// Proposal is a thread with a pending proposal (docs/protocol.md §5.1), and what a
// moderator judges it by: the act that proposed it and the message that
// act replies to — for a decide, the answer it accepts; for an answer, the
// question.
type Proposal struct {
	Thread Thread
	Act    *Message // nil when the proposal's event names no message
	Parent *Message // nil when Act is nil or is the thread's root
}

// ProposalQueue answers the moderators' queue: the pending proposals, most
// recent first, and how many are pending in all (more than the list holds
// when the page limit cut it).
type ProposalQueue struct {
	Proposals []Proposal
	Pending   int
}

// Proposals reads the moderators' queue: every thread whose state is
// unconfirmed, up to the page limit, each with its proposing act and that
// act's parent. It costs three queries whatever the queue's length (the
// threads, the acts through their events, the parents), and a fourth to
// count only when the page limit cut the list; each reads by an index
// (threads_unconfirmed, primary keys).
func (f *Forum) Proposals(ctx context.Context, who Caller) (ProposalQueue, error) {
	if v, err, ok := onStandby(f, who, func(r *Forum) (ProposalQueue, error) { return r.Proposals(ctx, who) }); ok {
		return v, err
	}
	if err := need(who, RightRead); err != nil {
		return ProposalQueue{}, err
	}
	if err := f.escalateDue(ctx, who); err != nil {
		return ProposalQueue{}, err
	}
	db := f.db.WithContext(ctx)
	limit := f.limits.PageMax
	var rows []models.Thread
	if err := db.Where("state_confirmed_at IS NULL").Order("activity_seq DESC").Limit(limit + 1).Find(&rows).Error; err != nil {
		return ProposalQueue{}, fmt.Errorf("proposals: %w", err)
	}
	out := ProposalQueue{Proposals: []Proposal{}, Pending: len(rows)}
	if len(rows) > limit {
		rows = rows[:limit]
		n, err := f.pendingCount(ctx)
		if err != nil {
			return ProposalQueue{}, err
		}
		out.Pending = n
	}
	if len(rows) == 0 {
		return out, nil
	}
	events := make([]int64, len(rows))
	for i, th := range rows {
		events[i] = th.StateEventID
	}
	acts, err := proposingActs(db, events)
	if err != nil {
		return ProposalQueue{}, fmt.Errorf("proposals: acts: %w", err)
	}
	var parentIDs []int64
	for _, m := range acts {
		if m.ParentID != nil {
			parentIDs = append(parentIDs, *m.ParentID)
		}
	}
	parents := map[int64]models.Message{}
	if len(parentIDs) > 0 {
		var list []models.Message
		if err := db.Select(treeColumns).Where("id IN ?", parentIDs).Find(&list).Error; err != nil {
			return ProposalQueue{}, fmt.Errorf("proposals: parents: %w", err)
		}
		for _, m := range list {
			parents[m.ID] = m
		}
	}
	now := f.timestamp()
	for _, th := range rows {
		p := Proposal{Thread: f.threadShape(th, now)}
		if act, ok := acts[th.StateEventID]; ok {
			p.Act = messageShape(act)
			if act.ParentID != nil {
				if parent, ok := parents[*act.ParentID]; ok {
					p.Parent = messageShape(parent)
				}
			}
		}
		out.Proposals = append(out.Proposals, p)
	}
	return out, nil
}

// PendingCount is how many threads have a proposal waiting for a human or
// a lock holder: the navigation shows it. One count over the partial index
// threads_unconfirmed.
func (f *Forum) PendingCount(ctx context.Context, who Caller) (int, error) {
	if v, err, ok := onStandby(f, who, func(r *Forum) (int, error) { return r.PendingCount(ctx, who) }); ok {
		return v, err
	}
	if err := need(who, RightRead); err != nil {
		return 0, err
	}
	return f.pendingCount(ctx)
}

func (f *Forum) pendingCount(ctx context.Context) (int, error) {
	var n int64
	if err := f.db.WithContext(ctx).Model(&models.Thread{}).Where("state_confirmed_at IS NULL").Count(&n).Error; err != nil {
		return 0, fmt.Errorf("pending count: %w", err)
	}
	return int(n), nil
}

// proposingActs reads the messages that made the given state events, in
// one query, keyed by event id.
func proposingActs(db *gorm.DB, events []int64) (map[int64]models.Message, error) {
	rows, err := db.Raw("SELECT e.id, "+qualified("m", treeColumns)+
		" FROM events e JOIN messages m ON m.id = e.message_id WHERE e.id IN ?", events).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[int64]models.Message, len(events))
	for rows.Next() {
		var ev int64
		var m models.Message
		if err := rows.Scan(append([]any{&ev}, treeFields(&m)...)...); err != nil {
			return nil, err
		}
		out[ev] = m
	}
	return out, rows.Err()
}
