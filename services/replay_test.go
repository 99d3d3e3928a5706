package services_test

import (
	"fmt"
	"slices"

	"parley/services"
)

// replayed is a thread's state as its event log tells it.
type replayed struct {
	state, record services.State
	pending       bool
}

// matches compares the replayed log with the thread as stored.
func (r replayed) matches(th services.Thread) error {
	if r.state != th.State || r.record != th.StateOfRecord || r.pending == th.Confirmed {
		return fmt.Errorf("log replays to %s (record %s, pending %v); thread is %s (record %s, confirmed %v)",
			r.state, r.record, r.pending, th.State, th.StateOfRecord, th.Confirmed)
	}
	return nil
}

// replay walks a thread's events in order and checks that each is one step
// of docs/protocol.md §5 and §5.2 (errata 1): a state event leaves the current
// state; a mark confirmed as it was made (a human's or lock holder's)
// becomes the state of record; a model's proposal is allowed by the table
// from the current state and never lands behind the record (but for a
// reopen of a closed record); a confirm confirms the pending proposal; a
// withdraw returns to the record. Claim events change a claim, not the
// thread, and escalate events (guard profile) leave its state alone: they
// are skipped, after checking that an escalation names the state it found.
func replay(events []services.Event) (replayed, error) {
	var r replayed
	for i, e := range events {
		if e.Type == "claim" {
			continue
		}
		if e.Type == "escalate" {
			if e.FromState == nil || services.State(*e.FromState) != r.state || services.State(e.ToState) != r.state {
				return r, fmt.Errorf("event %d escalates %v → %s while the thread is %s", i, e.FromState, e.ToState, r.state)
			}
			continue
		}
		from, to := services.State(""), services.State(e.ToState)
		if e.FromState != nil {
			from = services.State(*e.FromState)
		}
		switch {
		case i == 0:
			if e.Type != "state" || from != "" || to != "open" || e.ConfirmedAt == nil {
				return r, fmt.Errorf("first event %+v is not the initial, confirmed open", e)
			}
			r = replayed{state: "open", record: "open"}
			continue
		case from != r.state:
			return r, fmt.Errorf("event %d (%s) leaves %s but the thread was %s", i, e.Type, from, r.state)
		}
		switch e.Type {
		case "confirm":
			if !r.pending || to != r.state {
				return r, fmt.Errorf("event %d confirms %s while the thread is %s (pending %v)", i, to, r.state, r.pending)
			}
			r.record, r.pending = r.state, false
		case "withdraw":
			if !r.pending || to != r.record {
				return r, fmt.Errorf("event %d withdraws to %s, record %s (pending %v)", i, to, r.record, r.pending)
			}
			r.state, r.pending = r.record, false
		case "state":
			settled := e.ConfirmedAt != nil && e.ConfirmedAt.Equal(e.At)
			if !settled && !modelMayPropose(r, to) {
				return r, fmt.Errorf("event %d: a model's proposal %s → %s on record %s is not allowed", i, from, to, r.record)
			}
			r.state, r.pending = to, !settled
			if settled {
				r.record = to
			}
		default:
			return r, fmt.Errorf("event %d has unknown type %q", i, e.Type)
		}
	}
	return r, nil
}

// modelMayPropose applies the table and "never behind the state of record"
// to a model's proposal, as written in docs/protocol.md (not services.Transitions).
func modelMayPropose(r replayed, to services.State) bool {
	allowed := false
	for act, from := range specMarks {
		target := map[string]services.State{"answer": "answered", "decide": "decided", "reopen": "open"}[act]
		if target == "" {
			target = services.State(act[len("mark "):])
		}
		if target == to && (slices.Contains(from, r.state) || r.pending && slices.Contains(specFromProposed[act], r.state)) {
			allowed = true
		}
	}
	backward := rank(to) >= 0 && rank(r.record) >= 0 && rank(to) < rank(r.record)
	return allowed && (!backward || to == "open" && r.record == "closed")
}
