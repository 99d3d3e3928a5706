package services

import "slices"

// State is a thread's state (docs/protocol.md §5).
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

// terminalStates lists closed and the side states, for queries.
func terminalStates() []string {
	return []string{string(Closed), string(Deferred), string(Obsolete), string(Rejected)}
}

// Transition is one row of the table of allowed marks. A mark is checked
// from the thread's current state: From lists the states it may leave,
// confirmed or proposed; FromProposed the states it may leave only while
// they are a pending proposal.
type Transition struct {
	Act          string  `json:"act"`
	From         []State `json:"from"`
	FromProposed []State `json:"from_proposed,omitempty"`
	To           State   `json:"to"`
	Note         string  `json:"note,omitempty"`
}

// Transitions is the table of docs/protocol.md §5 (errata 1) for everyone but a
// human re-mark. A human's mark may set any state from any state, except
// that a confirmed closed must first be reopened.
var Transitions = []Transition{
	{Act: "answer", From: []State{Open}, To: Answered,
		Note: "only when it answers an ask in a thread whose state is a confirmed open; elsewhere (answering a clarify, in answered or decided, under a pending proposal) it is accepted without a mark — an answer is never refused for its mark"},
	{Act: "decide", From: []State{Open, Answered}, To: Decided},
	{Act: "mark closed", From: []State{Answered, Decided}, To: Closed},
	{Act: "mark deferred", From: []State{Open, Answered, Decided}, FromProposed: []State{Closed}, To: Deferred},
	{Act: "mark obsolete", From: []State{Open, Answered, Decided}, FromProposed: []State{Closed}, To: Obsolete},
	{Act: "mark rejected", From: []State{Open, Answered, Decided}, FromProposed: []State{Closed}, To: Rejected},
	{Act: "reopen", From: []State{Closed, Deferred, Obsolete, Rejected}, To: Open},
}

// transitionAllowed reports whether the table lets act move a thread from
// a state (a pending proposal when proposed) to another.
func transitionAllowed(act string, from State, proposed bool, to State) bool {
	for _, t := range Transitions {
		if t.Act == act && t.To == to {
			return slices.Contains(t.From, from) || proposed && slices.Contains(t.FromProposed, from)
		}
	}
	return false
}

// behind reports whether to lies before record on the forward line
// open < answered < decided < closed; side states are off the line.
func behind(to, record State) bool {
	i, j := slices.Index(forwardStates, to), slices.Index(forwardStates, record)
	return i >= 0 && j >= 0 && i < j
}

// actName is the name of the act in the transitions table.
func actName(kind Kind, state State) string {
	if kind == Mark {
		return "mark " + string(state)
	}
	return string(kind)
}
