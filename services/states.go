package services

import "slices"

// State is a thread's state (PARLEY.md §5).
type State string

// The seven states.
const (
	Open     State = "open"
	Answered State = "answered"
	Decided  State = "decided"
	Closed   State = "closed"
	Deferred State = "deferred"
	Obsolete State = "obsolete"
	Rejected State = "rejected"
)

var (
	forwardStates = []State{Open, Answered, Decided, Closed}
	sideStates    = []State{Deferred, Obsolete, Rejected}
	allStates     = append(slices.Clone(forwardStates), sideStates...)
)

// ValidState reports whether s names one of the seven states.
func ValidState(s State) bool { return slices.Contains(allStates, s) }

// IsSide reports whether s is a side state (an end other than closed).
func IsSide(s State) bool { return slices.Contains(sideStates, s) }

// Terminal reports whether s is closed or a side state; such threads never
// appear in an inbox.
func Terminal(s State) bool { return s == Closed || IsSide(s) }

// Transition is one row of the table of allowed marks.
type Transition struct {
	Act  string  `json:"act"`
	From []State `json:"from"`
	To   State   `json:"to"`
}

// Transitions is the table of PARLEY.md §5 for everyone but a human re-mark.
// A human's mark may set any state from any state, except that a confirmed
// closed must first be reopened.
var Transitions = []Transition{
	{"answer", []State{Open, Answered}, Answered},
	{"decide", []State{Open, Answered}, Decided},
	{"mark closed", []State{Answered, Decided}, Closed},
	{"mark deferred", []State{Open, Answered, Decided}, Deferred},
	{"mark obsolete", []State{Open, Answered, Decided}, Obsolete},
	{"mark rejected", []State{Open, Answered, Decided}, Rejected},
	{"reopen", []State{Closed, Deferred, Obsolete, Rejected}, Open},
}

// transitionAllowed reports whether the table lets act move a thread from
// one state to another.
func transitionAllowed(act string, from, to State) bool {
	for _, t := range Transitions {
		if t.Act == act && t.To == to {
			return slices.Contains(t.From, from)
		}
	}
	return false
}

// actName is the name of the act in the transitions table.
func actName(kind Kind, state State) string {
	if kind == Mark {
		return "mark " + string(state)
	}
	return string(kind)
}
