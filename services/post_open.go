package services

import (
	"fmt"
	"time"

	"gorm.io/gorm"

	"parley/models"
)

// openThread stores an ask or assert without thread: a new thread whose
// root it is. Its initial open is no mark: it is confirmed from the start
// and recorded as the thread's first event. On a pgAction an ask sends
// its writes with COMMIT (openLater, post_open_later.go) and out is shaped
// as they are answered; any other opening post writes each row as it is
// built (openThreadNow). Both build the same rows (opening).
func (f *Forum) openThread(tx *gorm.DB, who Caller, env Envelope, superseded []models.Claim, out *Posted) error {
	o := opening{who: who, env: env, now: f.timestamp(), hash: bodyHash(env.Body)}
	work, err := planClaims(who, env, nil, superseded, o.now, nil, f.quorum())
	if err != nil {
		return err
	}
	if !openLater(tx, env, work) {
		return f.openThreadNow(tx, o, work, out)
	}
	a := actionOf(tx)
	if err := f.probeWithPosition(tx, a, who, o.hash, o.now); err != nil {
		return err // docs/protocol.md §14 rule 1, across threads
	}
	th := o.thread()
	msg := o.message(th)
	act, ev, err := o.event(tx, th, &msg)
	if err != nil {
		return err
	}
	o.finish(tx, &th, msg, ev, act.seq)
	return f.openThreadLater(tx, a, &th, &msg, &ev, o.now, out)
}

// openThreadNow writes an opening post's rows one statement at a time,
// each as it is built, with the ids the ones before it were given.
func (f *Forum) openThreadNow(tx *gorm.DB, o opening, work claimWork, out *Posted) error {
	if err := f.checkPartyDuplicate(tx, o.who, o.hash, o.now); err != nil {
		return err // docs/protocol.md §14 rule 1, across threads
	}
	th := o.thread()
	if err := tx.Create(&th).Error; err != nil {
		return fmt.Errorf("insert thread: %w", err)
	}
	msg := o.message(th)
	if err := insertMessage(tx, &msg); err != nil {
		return fmt.Errorf("insert message: %w", err)
	}
	act, ev, err := o.event(tx, th, &msg)
	if err != nil {
		return err
	}
	if err := tx.Create(&ev).Error; err != nil {
		return fmt.Errorf("insert event: %w", err)
	}
	if err := act.recordClaims(th, o.env, work); err != nil {
		return err
	}
	o.finish(tx, &th, msg, ev, act.seq)
	if err := saveThread(tx, &th); err != nil {
		return fmt.Errorf("update thread: %w", err)
	}
	*out, err = f.posted(tx, msg, th, o.now)
	return err
}

// opening builds the rows of a post that opens a thread, in the order
// they name each other: the thread, its root message, the opening event,
// then the thread's fields that name the message and the event. Each
// takes the ids of the rows before it as they stand, which on
// openThreadLater's path are still 0 (its statements name them through
// their sequences).
type opening struct {
	who  Caller
	env  Envelope
	now  time.Time
	hash string // the body's, as docs/protocol.md §14 rule 1 compares it
}

func (o opening) thread() models.Thread {
	return models.Thread{
		Title: titleOf(o.env.Body), State: string(Open), StateOrigin: o.who.Origin(),
		StateConfirmedAt: &o.now, StateLabel: o.who.EventLabel(),
		CreatedByIdentity: o.who.Identity, CreatedByExtension: o.env.Extension,
		MessageCount: 1, CreatedAt: o.now, UpdatedAt: o.now,
	}
}

func (o opening) message(th models.Thread) models.Message {
	msg := newMessage(th, nil, o.who, o.env, o.now)
	msg.BodyHash, msg.ChainLen = o.hash, chainAfter(nil, o.who, false)
	setAwaiting(&msg, askAwaiting(o.env).notSelf(turn{o.who.Identity, o.env.Extension}))
	return msg
}

// event takes the action's log position and builds the thread's first
// event, the open, confirmed from the start.
func (o opening) event(tx *gorm.DB, th models.Thread, msg *models.Message) (*action, models.Event, error) {
	seq, err := nextSeq(tx)
	if err != nil {
		return nil, models.Event{}, err
	}
	act := &action{tx: tx, who: o.who, ext: o.env.Extension, msg: msg, now: o.now, seq: seq}
	ev := act.event(th, EventTypeState, "", Open)
	ev.ConfirmedAt = &o.now
	return act, ev, nil
}

// finish sets the thread's fields that follow from its root message and
// opening event at log position seq.
func (o opening) finish(tx *gorm.DB, th *models.Thread, msg models.Message, ev models.Event, seq int64) {
	th.RootMessageID, th.StateEventID = msg.ID, ev.ID
	settleRecord(th, o.who.EventLabel())
	th.TurnMessageID, th.TurnSeq, th.ActivitySeq = msg.ID, seq, seq
	th.AwaitingIdentity, th.AwaitingExtension = msg.AwaitingIdentity, msg.AwaitingExtension
	turnOpened(tx, th.AwaitingIdentity)
	th.ModelRun, th.ReplyBy = runAfter(*th, o.who, change{}), msg.ReplyBy
}
