package services

import (
	"fmt"

	"parley/models"
)

// The state of record (docs/protocol.md §5.2, errata 1). A thread's State columns
// show its current state: a pending proposal, if a model proposed one, else
// the state of record. The Record columns hold the last state a human or a
// lock holder set or confirmed. A proposal never overrides them: admission
// and the inbox read the record only, and a model's mark never lands behind
// it on the forward line.
//
// Invariant: a proposal is pending exactly when State differs from
// RecordState (a mark that would make them equal withdraws the proposal).

// effect is what an act's mark does to the thread's state.
type effect int

const (
	unchanged      effect = iota // no mark, or a mark naming the state the thread is in
	proposal                     // a model's mark: pending on top of the state of record
	settle                       // a human's or lock holder's mark: the new state of record
	confirmPending               // names the pending proposal, by one whose marks are confirmed
	withdraw                     // names the state of record while a proposal is pending
)

// change is the effect of one act's mark and the state it names.
type change struct {
	effect effect
	to     State
}

func recordOf(th models.Thread) State { return State(th.RecordState) }

// pending reports whether a proposal sits on top of the state of record.
func pending(th models.Thread) bool { return th.StateConfirmedAt == nil }

// markOf is the state an act marks, or "" when it carries none (docs/protocol.md
// §4, last column). question is the question an answer answers
// (questionAbove): an answer marks answered only when it answers an ask
// in a thread that is open and confirmed, so it is never refused for its
// mark.
func markOf(th models.Thread, env Envelope, question *models.Message) State {
	switch env.Kind {
	case Answer:
		if question != nil && Kind(question.Kind) == Ask && State(th.State) == Open && !pending(th) {
			return Answered
		}
	case Decide:
		return Decided
	case Mark:
		return env.State
	case Reopen:
		return Open
	}
	return ""
}

// plan decides what a mark does, or refuses it with transition_invalid
// (docs/protocol.md §5, §5.1, §5.2).
//
//   - A `mark` naming the state of record while a proposal is pending
//     withdraws it (§5.2 rule 3), whoever of the thread's authority sends
//     it. Reading: a reopen or decide that the table allows from the
//     current state and that would land on the state of record withdraws
//     too (a creator's reopen of its own proposed closed, say), since a
//     proposal equal to the state of record is no proposal at all.
//   - A human's or lock holder's mark naming the pending proposal confirms
//     it, as confirm does.
//   - A human's `mark` may set any state. Otherwise a human's or lock
//     holder's mark must be allowed by the table from the current state or,
//     when a proposal is pending, from the state of record beneath it — the
//     proposal it discards (§5.2 rules 4 and 5: moderation "may also simply
//     mark another state").
//   - A model's mark is checked from the current state and never lands
//     behind the state of record, except a creator's reopen of its own
//     confirmed closed thread (§5.2 rule 2).
func plan(th models.Thread, who Caller, kind Kind, to State) (change, error) {
	cur, rec, proposed := State(th.State), recordOf(th), pending(th)
	act := actName(kind, to)
	switch {
	case to == "":
		return change{}, nil
	case proposed && to == rec && (kind == Mark || transitionAllowed(act, cur, proposed, to)):
		return change{withdraw, to}, nil
	case who.ConfirmsOwnMarks():
		switch {
		case proposed && to == cur:
			return change{confirmPending, to}, nil
		case kind == Mark && who.Human() && to == cur:
			return change{}, nil
		case kind == Mark && who.Human(),
			transitionAllowed(act, cur, proposed, to),
			proposed && transitionAllowed(act, rec, false, to):
			return change{settle, to}, nil
		}
	case !transitionAllowed(act, cur, proposed, to):
	case behind(to, rec) && !(kind == Reopen && rec == Closed) && !mutant("behind_record"):
		return change{}, Refuse(TransitionInvalid,
			"%s would land behind thread %s's state of record, %s (confirmed by %s); a model's mark never undoes what a human or a lock holder confirmed",
			act, ThreadKey(th.ID), rec, th.RecordConfirmedBy).On(transitionField(kind))
	default:
		return change{proposal, to}, nil
	}
	return change{}, refuseTransition(th, act, kind)
}

func refuseTransition(th models.Thread, act string, kind Kind) error {
	where := fmt.Sprintf("a thread that is %s", th.State)
	if pending(th) {
		where = fmt.Sprintf("a thread whose proposal %s (by %s) is pending on its state of record %s (confirmed by %s)",
			th.State, th.StateLabel, th.RecordState, th.RecordConfirmedBy)
	}
	return Refuse(TransitionInvalid, "%s is not allowed on %s; see states.transitions in the manifest", act, where).
		On(transitionField(kind))
}

func transitionField(k Kind) string {
	if k == Mark {
		return "state"
	}
	return "kind"
}

// applyChange records a planned change: the event, and the thread's state
// and state of record.
func (a *action) applyChange(th *models.Thread, chg change) error {
	switch chg.effect {
	case unchanged:
		return nil
	case confirmPending:
		return a.confirmProposal(th)
	case withdraw:
		ev := a.event(*th, EventTypeWithdraw, State(th.State), chg.to)
		ev.ConfirmedAt = &a.now
		if err := a.tx.Create(&ev).Error; err != nil {
			return fmt.Errorf("insert withdraw event: %w", err)
		}
		th.State, th.StateOrigin, th.StateLabel = th.RecordState, th.RecordOrigin, th.RecordLabel
		th.StateConfirmedAt, th.StateEventID = th.RecordConfirmedAt, th.RecordEventID
		return nil
	}
	ev := a.event(*th, EventTypeState, State(th.State), chg.to)
	if chg.effect == settle {
		ev.ConfirmedAt = &a.now
	}
	if err := a.tx.Create(&ev).Error; err != nil {
		return fmt.Errorf("insert event: %w", err)
	}
	th.State, th.StateOrigin, th.StateLabel = string(chg.to), a.who.Origin(), a.who.EventLabel()
	th.StateConfirmedAt, th.StateEventID = ev.ConfirmedAt, ev.ID
	if chg.effect == settle {
		settleRecord(th, a.who.EventLabel())
		a.noteRecordVerdict(th)
	}
	return nil
}

// settleRecord makes the thread's current, confirmed state its state of
// record.
func settleRecord(th *models.Thread, confirmedBy string) {
	th.RecordState, th.RecordOrigin, th.RecordLabel = th.State, th.StateOrigin, th.StateLabel
	th.RecordConfirmedAt, th.RecordEventID = th.StateConfirmedAt, th.StateEventID
	th.RecordConfirmedBy = confirmedBy
}

// confirmProposal makes the pending proposal the state of record: it fills
// the proposal event's confirmed_at and appends a confirm event.
//
// Reading: §8.1 gives a confirm event message null; that is the confirm
// operation's (an action without a message). A confirmation caused by a
// human's or lock holder's act naming the proposal names that act as its
// message.
func (a *action) confirmProposal(th *models.Thread) error {
	if err := a.tx.Model(&models.Event{}).Where("id = ?", th.StateEventID).Update("confirmed_at", a.now).Error; err != nil {
		return fmt.Errorf("confirm proposal event: %w", err)
	}
	ev := a.event(*th, EventTypeConfirm, State(th.State), State(th.State))
	ev.ConfirmedAt = &a.now
	if err := a.tx.Create(&ev).Error; err != nil {
		return fmt.Errorf("insert confirm event: %w", err)
	}
	th.StateConfirmedAt = &a.now
	settleRecord(th, a.who.EventLabel())
	a.noteRecordVerdict(th)
	return nil
}
