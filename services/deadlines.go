package services

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"parley/models"
)

// Reply-by deadlines, the guard profile's rule 4 (docs/protocol.md §14).
//
// Reading: "the turn it opened is still open when reply_by passes" means
// the thread's turn message is still that ask — no act has opened a new
// turn since. A note, an attest and a verify carry the turn forward and so
// do not move it; every other act does. The thread keeps the open turn's
// deadline in threads.reply_by, set when an ask with reply_by opens the
// turn and cleared whenever the turn moves, so a thread is overdue exactly
// when its reply_by has passed: computed when read, never by a cron job.
//
// The escalate event is recorded once per ask, by whichever comes first: a
// read that finds an overdue turn not yet escalated, the periodic sweep of
// `parley serve`, or the act that finally moves the overdue turn. All run
// escalateLocked under the thread's row lock, which re-checks;
// threads.escalated_at and the unique index events_escalate_once make
// "once" hold in the database, with any number of servers on it.

// escalateBatch bounds what one read escalates; the sweep loops.
const escalateBatch = 50

// readReplyBy reads an ask's deadline: an RFC 3339 time in the future, at
// most reply_by_max_hours ahead.
func (f *Forum) readReplyBy(raw json.RawMessage, env *Envelope) error {
	if env.Kind != Ask {
		return Refuse(InvalidBody, "reply_by is allowed only on ask (guard profile)").On("reply_by")
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return Refuse(InvalidBody, "reply_by must be an RFC 3339 time string").On("reply_by")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return Refuse(InvalidBody, "reply_by must be an RFC 3339 time such as 2030-01-31T12:00:00Z").On("reply_by")
	}
	t, now := t.UTC().Truncate(time.Microsecond), f.timestamp()
	max := time.Duration(f.limits.ReplyByMaxHours) * time.Hour
	switch {
	case !t.After(now):
		return Refuse(InvalidBody, "reply_by must lie in the future; it was %s", t.Format(time.RFC3339)).On("reply_by")
	case t.Sub(now) > max:
		return Refuse(InvalidBody, "reply_by may lie at most %d hours ahead (reply_by_max_hours); it was %s", f.limits.ReplyByMaxHours, t.Format(time.RFC3339)).On("reply_by")
	}
	env.ReplyBy = &t
	return nil
}

// overdueSince is the Thread shape's overdue_since: the open turn's
// deadline once it has passed, else nil.
func overdueSince(th models.Thread, now time.Time) *time.Time {
	if th.ReplyBy == nil || th.ReplyBy.After(now) {
		return nil
	}
	return utc(th.ReplyBy)
}

// EscalateDue escalates the turns whose deadline has passed and that have
// not escalated yet, oldest deadline first, at most escalateBatch of them,
// and reports how many it escalated. Reads call it before they read, and
// `parley serve` calls it periodically, so an ask escalates within one
// sweep interval of its deadline even when nobody reads.
func (f *Forum) EscalateDue(ctx context.Context) (int, error) {
	now := f.timestamp()
	var ids []int64
	err := f.db.WithContext(ctx).Model(&models.Thread{}).
		Where("reply_by IS NOT NULL AND escalated_at IS NULL AND reply_by <= ?", now).
		Order("reply_by").Limit(escalateBatch).Pluck("id", &ids).Error
	if err != nil {
		return 0, fmt.Errorf("escalate: due turns: %w", err)
	}
	n := 0
	for _, id := range ids {
		done, err := f.escalate(ctx, id)
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	return n, nil
}

// NextDue is the earliest deadline of a turn not yet escalated (nil when
// there is none), and a channel closed when the log next advances: a write
// of any process may bring an earlier one. The channel is taken before the
// read, so a write during it is not missed. With it, `parley serve` sweeps
// at the deadline itself rather than every quarter second, and an idle
// forum costs its database nothing (issue 31). One indexed read.
func (f *Forum) NextDue(ctx context.Context) (*time.Time, <-chan struct{}, error) {
	news := f.hub.wait()
	var next []time.Time
	err := f.db.WithContext(ctx).Model(&models.Thread{}).
		Where("reply_by IS NOT NULL AND escalated_at IS NULL").
		Order("reply_by").Limit(1).Pluck("reply_by", &next).Error
	if err != nil {
		return nil, news, fmt.Errorf("escalate: next deadline: %w", err)
	}
	if len(next) == 0 {
		return nil, news, nil
	}
	return &next[0], news, nil
}

// escalateDue is EscalateDue for a read by who, which only needs it done.
// It skips the query when who's admission found no deadline the read's
// clock has reached (see dueProbe).
func (f *Forum) escalateDue(ctx context.Context, who Caller) error {
	if who.due.known && (who.due.next == nil || f.timestamp().Before(*who.due.next)) {
		return nil
	}
	// On a standby's view the escalation writes on the primary.
	_, err := f.writer().EscalateDue(ctx)
	return err
}

// escalate records one thread's escalation in one transaction, unless
// another read or server already has, or its turn moved meanwhile.
func (f *Forum) escalate(ctx context.Context, id int64) (bool, error) {
	done := false
	ctx, written := withSink(ctx)
	err := f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		th, err := lockThread(tx, id)
		if err != nil {
			return err
		}
		now := f.timestamp()
		if done, err = escalateLocked(tx, &th, now); err != nil || !done {
			return err
		}
		if err := saveThread(tx, &th); err != nil {
			return fmt.Errorf("update thread: %w", err)
		}
		return nil
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return false, nil // another process escalated this ask first
	}
	if err != nil {
		return false, fmt.Errorf("escalate %s: %w", ThreadKey(id), err)
	}
	f.published(written) // waiting inboxes of humans and lock holders see it
	return done, nil
}

// escalateLocked records the escalate event of a thread locked by tx when
// its open turn is overdue and has not escalated yet, and reports whether
// it did. The thread's turn counts as new (turn_seq), so that the inboxes
// of humans and lock holders, paged by since, see it; the caller saves the
// thread.
//
// Post calls it too, before an act moves a turn that is already overdue:
// the turn was open when reply_by passed, so it escalated, even when the
// late answer comes before any read or sweep has seen it.
func escalateLocked(tx *gorm.DB, th *models.Thread, now time.Time) (bool, error) {
	if th.EscalatedAt != nil || overdueSince(*th, now) == nil {
		return false, nil
	}
	seq, err := nextSeq(tx)
	if err != nil {
		return false, err
	}
	ev := models.Event{
		Seq: seq, ThreadID: th.ID, Type: string(EventTypeEscalate), FromState: th.State, ToState: th.State,
		Origin: guardOrigin, Label: guardOrigin,
		ActorIdentity: th.AwaitingIdentity, ActorExtension: th.AwaitingExtension,
		MessageID: &th.TurnMessageID, At: now,
	}
	if err := tx.Create(&ev).Error; err != nil {
		return false, fmt.Errorf("insert escalate event: %w", err)
	}
	th.EscalatedAt, th.TurnSeq, th.ActivitySeq, th.UpdatedAt = &now, seq, seq, now
	turnOpened(tx, th.AwaitingIdentity, audienceModerators)
	return true, nil
}

// guardOrigin is the origin and label of an escalate event.
//
// Reading: no participant acts when a deadline passes. An escalate event
// therefore has origin and label "guard", names as its actor the party the
// turn awaited — who failed to answer ("*" when anyone was awaited) — and
// as its message the ask whose reply_by passed; from_state and to_state
// are both the thread's state, which an escalation leaves alone, and
// confirmed_at is null, as there is nothing to confirm.
const guardOrigin = "guard"
