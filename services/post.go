package services

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"parley/models"
)

// Posted answers post: the stored message and the thread after it.
type Posted struct {
	Message *Message `json:"message"`
	Thread  Thread   `json:"thread"`
}

// Post carries out one envelope (PARLEY.md §3–§7): it parses it strictly,
// checks rights, state, authority, loop protection and limits, and stores
// the message, the thread's new state and awaiting, and the event, in one
// transaction.
func (f *Forum) Post(ctx context.Context, who Caller, raw []byte) (Posted, error) {
	if err := need(who, RightWrite); err != nil {
		return Posted{}, err
	}
	env, err := f.ParseEnvelope(raw)
	if err != nil {
		return Posted{}, err
	}
	var out Posted
	err = f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := checkAddressee(tx, env.To); err != nil {
			return err
		}
		if env.ThreadID == 0 {
			out, err = f.openThread(tx, who, env)
		} else {
			out, err = f.reply(tx, who, env)
		}
		return err
	})
	if err != nil {
		return Posted{}, fmt.Errorf("post: %w", err)
	}
	return out, nil
}

// openThread stores an ask without thread: a new thread whose root it is.
// Its initial open is no mark: it is confirmed from the start and recorded
// as the thread's first event.
func (f *Forum) openThread(tx *gorm.DB, who Caller, env Envelope) (Posted, error) {
	now := f.timestamp()
	th := models.Thread{
		Title: titleOf(env.Body), State: string(Open), StateOrigin: who.Origin(),
		StateConfirmedAt: &now, StateLabel: who.EventLabel(),
		CreatedByIdentity: who.Identity, CreatedByExtension: env.Extension,
		MessageCount: 1, CreatedAt: now, UpdatedAt: now,
	}
	if err := tx.Create(&th).Error; err != nil {
		return Posted{}, fmt.Errorf("insert thread: %w", err)
	}
	msg := newMessage(th, nil, who, env, now)
	setAwaiting(&msg, askAwaiting(env))
	if err := tx.Create(&msg).Error; err != nil {
		return Posted{}, fmt.Errorf("insert message: %w", err)
	}
	seq, err := nextSeq(tx)
	if err != nil {
		return Posted{}, err
	}
	ev := newEvent(th, who, env, "state", "", Open, &msg.ID, now, seq)
	ev.ConfirmedAt = &now
	if err := tx.Create(&ev).Error; err != nil {
		return Posted{}, fmt.Errorf("insert event: %w", err)
	}
	th.RootMessageID, th.StateEventID = msg.ID, ev.ID
	th.TurnMessageID, th.TurnSeq, th.ActivitySeq = msg.ID, seq, seq
	th.AwaitingIdentity, th.AwaitingExtension = msg.AwaitingIdentity, msg.AwaitingExtension
	if err := tx.Save(&th).Error; err != nil {
		return Posted{}, fmt.Errorf("update thread: %w", err)
	}
	return Posted{Message: messageShape(msg), Thread: threadShape(th)}, nil
}

// reply stores an envelope inside an existing thread.
func (f *Forum) reply(tx *gorm.DB, who Caller, env Envelope) (Posted, error) {
	th, err := lockThread(tx, env.ThreadID)
	if err != nil {
		return Posted{}, err
	}
	parent, err := findParent(tx, th, env.ParentID)
	if err != nil {
		return Posted{}, err
	}
	for _, check := range []func() error{
		func() error { return admits(th, who, env) },
		func() error { return authorize(th, who, env.Kind) },
		func() error { return checkTransition(th, who, env) },
		func() error { return checkSelfReply(parent, who, env) },
		func() error { return f.checkLimits(th, parent) },
	} {
		if err := check(); err != nil {
			return Posted{}, err
		}
	}
	now := f.timestamp()
	msg := newMessage(th, &parent, who, env, now)
	awaiting, err := replyAwaiting(tx, th, parent, env)
	if err != nil {
		return Posted{}, err
	}
	setAwaiting(&msg, awaiting)
	if err := tx.Create(&msg).Error; err != nil {
		return Posted{}, fmt.Errorf("insert message: %w", err)
	}
	seq, err := nextSeq(tx)
	if err != nil {
		return Posted{}, err
	}
	if err := f.applyMark(tx, &th, who, env, msg.ID, now, seq); err != nil {
		return Posted{}, err
	}
	if env.Kind != Note {
		// Every act but note opens a new turn; a note carries it forward.
		th.AwaitingIdentity, th.AwaitingExtension = msg.AwaitingIdentity, msg.AwaitingExtension
		th.TurnMessageID, th.TurnSeq = msg.ID, seq
	}
	th.MessageCount++
	th.UpdatedAt, th.ActivitySeq = now, seq
	if err := tx.Save(&th).Error; err != nil {
		return Posted{}, fmt.Errorf("update thread: %w", err)
	}
	return Posted{Message: messageShape(msg), Thread: threadShape(th)}, nil
}

// applyMark records the state change an act's mark causes, if any.
//
// Reading: a mark naming the state the thread is already in changes
// nothing, except that from someone whose marks are confirmed (a human, a
// lock holder) it confirms the pending proposal (PARLEY.md §5: "mark with
// the current unconfirmed state, by a lock holder — confirms it"). A
// model's answer on a confirmed answered thread therefore leaves it
// confirmed rather than turning it back into a proposal.
func (f *Forum) applyMark(tx *gorm.DB, th *models.Thread, who Caller, env Envelope, msgID int64, now time.Time, seq int64) error {
	to := markOf(env.Kind, env.State)
	if to == "" {
		return nil
	}
	if State(th.State) == to {
		if th.StateConfirmedAt != nil || !who.ConfirmsOwnMarks() {
			return nil
		}
		return f.confirmState(tx, th, who, env.Extension, &msgID, now, seq)
	}
	ev := newEvent(*th, who, env, "state", State(th.State), to, &msgID, now, seq)
	if who.ConfirmsOwnMarks() {
		ev.ConfirmedAt = &now
	}
	if err := tx.Create(&ev).Error; err != nil {
		return fmt.Errorf("insert event: %w", err)
	}
	th.State, th.StateOrigin, th.StateLabel = string(to), who.Origin(), who.EventLabel()
	th.StateConfirmedAt, th.StateEventID = ev.ConfirmedAt, ev.ID
	return nil
}

// confirmState confirms the thread's pending proposal: it fills the
// proposal event's confirmed_at and appends a confirm event.
//
// Reading: §8.1 gives a confirm event message null; that is the confirm
// operation's. A confirmation caused by a lock holder's same-state mark
// names that mark as its message.
func (f *Forum) confirmState(tx *gorm.DB, th *models.Thread, who Caller, ext string, msgID *int64, now time.Time, seq int64) error {
	if err := tx.Model(&models.Event{}).Where("id = ?", th.StateEventID).Update("confirmed_at", now).Error; err != nil {
		return fmt.Errorf("confirm proposal event: %w", err)
	}
	ev := newEvent(*th, who, Envelope{Extension: ext}, "confirm", State(th.State), State(th.State), msgID, now, seq)
	ev.ConfirmedAt = &now
	if err := tx.Create(&ev).Error; err != nil {
		return fmt.Errorf("insert confirm event: %w", err)
	}
	th.StateConfirmedAt = &now
	return nil
}

// findParent resolves the parent: the root when absent, else a message that
// must exist and belong to the thread.
func findParent(tx *gorm.DB, th models.Thread, id int64) (models.Message, error) {
	if id == 0 {
		id = th.RootMessageID
	}
	var parent models.Message
	err := tx.First(&parent, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return parent, Refuse(MessageNotFound, "message %s does not exist", MessageKey(id)).On("parent")
	}
	if err != nil {
		return parent, fmt.Errorf("find parent: %w", err)
	}
	if parent.ThreadID != th.ID {
		return parent, Refuse(ParentMismatch, "message %s belongs to thread %s, not %s",
			MessageKey(id), ThreadKey(parent.ThreadID), ThreadKey(th.ID)).On("parent")
	}
	return parent, nil
}

func newMessage(th models.Thread, parent *models.Message, who Caller, env Envelope, now time.Time) models.Message {
	m := models.Message{
		ThreadID: th.ID, Depth: 1, Kind: string(env.Kind),
		AuthorIdentity: who.Identity, AuthorExtension: env.Extension,
		AuthorKind: string(who.Kind), AuthorBadge: who.Badge(),
		Body: env.Body, ProvenanceModel: env.Model, ProvenanceClient: env.Client,
		State: string(env.State), CreatedAt: now,
	}
	if parent != nil {
		m.ParentID, m.Depth = &parent.ID, parent.Depth+1
	}
	if env.To != nil {
		m.ToIdentity, m.ToExtension = env.To.Identity, env.To.Extension
	}
	return m
}

func newEvent(th models.Thread, who Caller, env Envelope, typ string, from, to State, msgID *int64, now time.Time, seq int64) models.Event {
	return models.Event{
		Seq: seq, ThreadID: th.ID, Type: typ, FromState: string(from), ToState: string(to),
		Origin: who.Origin(), Label: who.EventLabel(),
		ActorIdentity: who.Identity, ActorExtension: env.Extension,
		MessageID: msgID, At: now,
	}
}
