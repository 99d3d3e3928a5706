package components

import (
	"strings"
	"time"

	"parley/services"
)

// Entry is one line of a thread's timeline, in words: who did what
// ("ada closed the thread"), what became of it later ("turned down by
// ada"), and the message that did it.
type Entry struct {
	Type    string
	Text    string
	Outcome string // for a proposal: what became of it
	Pending bool   // a proposal still waiting for a human or a lock holder
	Message string // the message that made it, "" for none
	Claim   string
	At      time.Time
}

// who names an actor as a timeline says it: a human by name.
func who(label string) string {
	if name, ok := strings.CutPrefix(label, "human:"); ok {
		return name
	}
	return label
}

// stateVerb says what a settled state change did.
func stateVerb(from *services.EventState, to services.EventState) string {
	switch {
	case from == nil && to == "open":
		return "opened the thread"
	case to == "open":
		return "reopened the thread"
	case to == "closed":
		return "closed the thread"
	case to == "answered":
		return "marked the thread answered"
	case to == "decided":
		return "decided the thread"
	}
	return "marked the thread " + string(to)
}

// Entries turns a thread's events, oldest first, into a timeline. A
// model's proposal says what became of it, reading the events after it:
// confirmed, turned down (withdrawn), or passed over by a later state;
// only the last one can still be pending.
func Entries(events []services.Event) []Entry {
	out := make([]Entry, 0, len(events))
	for i, e := range events {
		en := Entry{Type: string(e.Type), At: e.At}
		if e.Message != nil {
			en.Message = *e.Message
		}
		if e.Claim != nil {
			en.Claim = *e.Claim
		}
		actor := who(e.Label)
		switch e.Type {
		case services.EventTypeState:
			if e.ConfirmedAt != nil || e.Origin != "llm" {
				en.Text = actor + " " + stateVerb(e.FromState, e.ToState)
				break
			}
			en.Text = actor + " proposed " + string(e.ToState)
			en.Outcome, en.Pending = fate(events[i+1:], e)
		case services.EventTypeConfirm:
			en.Text = actor + " confirmed " + string(e.ToState)
		case services.EventTypeWithdraw:
			from := ""
			if e.FromState != nil {
				from = string(*e.FromState)
			}
			en.Text = actor + " turned down " + from + ", keeping " + string(e.ToState)
		case services.EventTypeClaim:
			en.Text = "claim " + en.Claim + " became " + string(e.ToState)
			if e.FromState != nil {
				en.Text += " (was " + string(*e.FromState) + ")"
			}
			en.Text += " — " + actor
		case services.EventTypeEscalate:
			en.Text = Awaiting(&services.Awaiting{Identity: e.Actor.Identity, Extension: e.Actor.Extension}) + " did not answer in time; the guard escalated it"
		default:
			en.Text = actor + " " + string(e.Type) + " " + string(e.ToState)
		}
		out = append(out, en)
	}
	return out
}

// fate is what became of a proposal, from the events after it.
func fate(later []services.Event, p services.Event) (string, bool) {
	for _, e := range later {
		switch e.Type {
		case services.EventTypeConfirm:
			return "confirmed by " + who(e.Label), false
		case services.EventTypeWithdraw:
			return "turned down by " + who(e.Label), false
		case services.EventTypeState:
			if e.ConfirmedAt != nil || e.Origin != "llm" {
				return "passed over when " + who(e.Label) + " " + stateVerb(e.FromState, e.ToState), false
			}
			return "replaced by " + who(e.Label) + "'s proposal", false
		}
	}
	if p.ConfirmedAt != nil {
		return "", false
	}
	return "waiting for a human or a lock holder", true
}
