package services

import (
	"context"
	"encoding/json"
	"fmt"

	"gorm.io/gorm"
)

// Confirmed answers confirm.
type Confirmed struct {
	Thread Thread `json:"thread"`
}

// Confirm confirms a thread's current proposal (docs/protocol.md §5.1). It needs
// the right lock or a human. The state named must be the thread's current
// unconfirmed state, so nobody confirms something that changed underneath
// them — or its current state already confirmed, which changes nothing. thread is the path parameter; raw is the request body, which holds
// "state" (and may repeat "thread", as MCP's merged arguments do).
func (f *Forum) Confirm(ctx context.Context, who Caller, thread string, raw []byte) (Confirmed, error) {
	if err := need(who, RightRead); err != nil {
		return Confirmed{}, err
	}
	if !who.Human() && !who.Has(RightLock) {
		return Confirmed{}, Refuse(TokenRightMissing, "confirm needs the right lock, or a human")
	}
	id, state, err := parseConfirm(thread, raw)
	if err != nil {
		return Confirmed{}, err
	}
	var out Confirmed
	ctx, written := withSink(ctx)
	err = f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		th, err := lockThread(tx, id)
		if err != nil {
			return err
		}
		if !pending(th) && State(th.State) == state {
			// Reading: §5.1 says state MUST equal the current unconfirmed
			// state, so that nobody confirms what changed underneath them.
			// A state that is already confirmed, with nothing pending on
			// top, changed nothing underneath: what the caller meant to
			// confirm stands. Confirming it again answers the thread and
			// records nothing, which makes a repeated confirm (a retry
			// after a lost answer) idempotent, as the MCP tool is
			// annotated. A pending proposal with state naming the state of
			// record beneath it is still state_changed: the caller's view
			// is stale, and withdrawing is a mark's business.
			out.Thread = f.threadShape(th, f.timestamp())
			return nil
		}
		if !pending(th) || State(th.State) != state {
			return Refuse(StateChanged, "thread %s is %s (%s), not an unconfirmed %s; read it again before confirming",
				ThreadKey(th.ID), th.State, confirmation(!pending(th)), state).On("state")
		}
		seq, err := nextSeq(tx)
		if err != nil {
			return err
		}
		now := f.timestamp()
		wasEnded := Terminal(recordOf(th))
		a := &action{tx: tx, who: who, now: now, seq: seq} // no extension, no message
		if err := a.confirmProposal(&th); err != nil {
			return err
		}
		if wasEnded && !Terminal(recordOf(th)) {
			// A confirmed reopen brings the thread back into inboxes: its
			// turn counts as new, so since cursors see it.
			th.TurnSeq = seq
			turnOpened(tx, th.AwaitingIdentity)
		}
		// A confirmed state change resumes a thread the guard paused
		// (docs/protocol.md §14 rule 3).
		th.ModelRun = 0
		th.UpdatedAt, th.ActivitySeq = now, seq
		if err := tx.Save(&th).Error; err != nil {
			return fmt.Errorf("update thread: %w", err)
		}
		if err := f.signVerdicts(a, th); err != nil {
			return err
		}
		out.Thread = f.threadShape(th, now)
		return nil
	})
	if err != nil {
		return Confirmed{}, fmt.Errorf("confirm: %w", err)
	}
	f.published(written)
	return out, nil
}

func parseConfirm(thread string, raw []byte) (int64, State, error) {
	obj, err := decodeObject(raw, "", "confirm's input ({\"state\": ...})")
	if err != nil {
		return 0, "", err
	}
	var state State
	for _, key := range sortedKeys(obj) {
		switch key {
		case "state":
			if json.Unmarshal(obj[key], &state) != nil || !ValidState(state) {
				return 0, "", Refuse(InvalidBody, "state must be one of %s", stateList()).On("state")
			}
		case "thread":
			id, ok := refFromJSON(obj[key], threadPrefix)
			if !ok {
				return 0, "", badThreadRef("thread")
			}
			if prev, _ := ParseThreadRef(thread); thread != "" && prev != id {
				return 0, "", Refuse(InvalidBody, "the body names another thread than the path").On("thread")
			}
			thread = ThreadKey(id)
		default:
			return 0, "", Refuse(InvalidBody, "unknown field %q: confirm takes state", key).On(key)
		}
	}
	if state == "" {
		return 0, "", Refuse(InvalidBody, "state is required: the unconfirmed state you confirm").On("state")
	}
	id, err := threadRef(thread)
	return id, state, err
}

func confirmation(confirmed bool) string {
	if confirmed {
		return "confirmed"
	}
	return "unconfirmed"
}
