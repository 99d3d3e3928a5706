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
	setAwaiting(&msg, askAwaiting(env).notSelf(turn{who.Identity, env.Extension}))
	if err := tx.Create(&msg).Error; err != nil {
		return Posted{}, fmt.Errorf("insert message: %w", err)
	}
	seq, err := nextSeq(tx)
	if err != nil {
		return Posted{}, err
	}
	ev := newEvent(th, who, env.Extension, "state", "", Open, &msg.ID, now, seq)
	ev.ConfirmedAt = &now
	if err := tx.Create(&ev).Error; err != nil {
		return Posted{}, fmt.Errorf("insert event: %w", err)
	}
	th.RootMessageID, th.StateEventID = msg.ID, ev.ID
	settleRecord(&th, who.EventLabel())
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
	if err := admits(th, who, env); err != nil {
		return Posted{}, err
	}
	if err := authorize(th, who, env.Kind); err != nil {
		return Posted{}, err
	}
	var question *models.Message
	if env.Kind == Answer {
		if question, err = questionAbove(tx, parent); err != nil {
			return Posted{}, err
		}
	}
	chg, err := plan(th, who, env.Kind, markOf(th, env, question))
	if err != nil {
		return Posted{}, err
	}
	if err := checkSelfReply(parent, who, env); err != nil {
		return Posted{}, err
	}
	if err := f.checkLimits(th, parent); err != nil {
		return Posted{}, err
	}
	now := f.timestamp()
	msg := newMessage(th, &parent, who, env, now)
	awaiting := replyAwaiting(th, parent, env, question).notSelf(turn{who.Identity, env.Extension})
	setAwaiting(&msg, awaiting)
	if err := tx.Create(&msg).Error; err != nil {
		return Posted{}, fmt.Errorf("insert message: %w", err)
	}
	seq, err := nextSeq(tx)
	if err != nil {
		return Posted{}, err
	}
	if err := f.applyChange(tx, &th, who, env.Extension, chg, msg.ID, now, seq); err != nil {
		return Posted{}, err
	}
	moveTurn(&th, msg, awaiting, seq)
	th.MessageCount++
	th.UpdatedAt, th.ActivitySeq = now, seq
	if err := tx.Save(&th).Error; err != nil {
		return Posted{}, fmt.Errorf("update thread: %w", err)
	}
	return Posted{Message: messageShape(msg), Thread: threadShape(th)}, nil
}

// moveTurn makes the new message's awaiting the thread's (PARLEY.md §4:
// the thread's awaiting is that of its last message). Every act but note
// opens a new turn at this message.
//
// Reading: a note carries the current turn forward and opens none, so the
// turn's message stays the one to reply to. When the note cannot carry it
// (it would await its own author, who is then awaited no longer), the turn
// is re-addressed to anyone and counts as new in inboxes.
func moveTurn(th *models.Thread, msg models.Message, awaiting turn, seq int64) {
	if msg.Kind == string(Note) && awaiting == (turn{th.AwaitingIdentity, th.AwaitingExtension}) {
		return
	}
	th.AwaitingIdentity, th.AwaitingExtension = awaiting.identity, awaiting.extension
	th.TurnSeq = seq
	if msg.Kind != string(Note) {
		th.TurnMessageID = msg.ID
	}
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

func newEvent(th models.Thread, who Caller, ext string, typ string, from, to State, msgID *int64, now time.Time, seq int64) models.Event {
	return models.Event{
		Seq: seq, ThreadID: th.ID, Type: typ, FromState: string(from), ToState: string(to),
		Origin: who.Origin(), Label: who.EventLabel(),
		ActorIdentity: who.Identity, ActorExtension: ext,
		MessageID: msgID, At: now,
	}
}
