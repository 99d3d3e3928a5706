package services_test

import (
	"fmt"
	"slices"
	"testing"

	"parley/services"
)

// specMarks is the table "Allowed marks" of PARLEY.md §5, written out again
// here on purpose, so the test does not trust services.Transitions.
var specMarks = map[string][]services.State{
	"answer":        {"open", "answered"},
	"decide":        {"open", "answered"},
	"mark closed":   {"answered", "decided"},
	"mark deferred": {"open", "answered", "decided"},
	"mark obsolete": {"open", "answered", "decided"},
	"mark rejected": {"open", "answered", "decided"},
	"reopen":        {"closed", "deferred", "obsolete", "rejected"},
}

var (
	everyState = []services.State{"open", "answered", "decided", "closed", "deferred", "obsolete", "rejected"}
	sideState  = []services.State{"deferred", "obsolete", "rejected"}
)

// act is one envelope kind, with the state a mark names.
type act struct {
	kind  string
	state services.State
}

func (a act) name() string {
	if a.kind == "mark" {
		return "mark " + string(a.state)
	}
	return a.kind
}

// mark is the state an act carries (PARLEY.md §4, last column).
func (a act) mark() services.State {
	return map[string]services.State{"answer": "answered", "decide": "decided", "mark": a.state, "reopen": "open"}[a.kind]
}

func everyAct() []act {
	acts := []act{{kind: "ask"}, {kind: "answer"}, {kind: "clarify"}, {kind: "note"}, {kind: "propose"}, {kind: "object"}, {kind: "decide"}, {kind: "reopen"}}
	for _, s := range everyState {
		acts = append(acts, act{kind: "mark", state: s})
	}
	return acts
}

// outcome is what the protocol says must happen.
type outcome struct {
	reason    services.Reason // "" when accepted
	state     services.State
	confirmed bool
}

// expect derives the outcome from the text of PARLEY.md §5, §5.1 and §6 for
// a caller with authority over the thread: the creator (a model with write),
// a lock holder or a human.
func expect(caller string, a act, from services.State, confirmed bool) outcome {
	human, lock := caller == "human", caller == "lock holder"
	isSide := slices.Contains(sideState, from)
	switch {
	case from == "closed" && confirmed && a.kind != "reopen":
		return outcome{reason: services.ThreadLocked}
	case isSide && confirmed && a.kind != "reopen" && !(a.kind == "mark" && human):
		return outcome{reason: services.ThreadEnded}
	case a.kind == "reopen" && isSide && confirmed && caller == "creator":
		return outcome{reason: services.ThreadAuthorityMissing}
	}
	to := a.mark()
	if to == "" {
		return outcome{state: from, confirmed: confirmed}
	}
	allowed := slices.Contains(specMarks[a.name()], from) ||
		(a.kind == "mark" && human) ||
		(a.kind == "mark" && lock && to == from && !confirmed)
	if !allowed {
		return outcome{reason: services.TransitionInvalid}
	}
	confirms := human || lock
	if to == from {
		return outcome{state: to, confirmed: confirmed || confirms}
	}
	return outcome{state: to, confirmed: confirms}
}

// TestActsInEveryState walks every act in every state, confirmed and
// proposed, for each kind of caller with authority.
func TestActsInEveryState(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		creator, bystander := w.agent("creator"), w.agent("bystander")
		callers := map[string]services.Caller{
			"creator":     creator,
			"lock holder": w.agent("moderator", services.RightRead, services.RightWrite, services.RightLock),
			"human":       w.human("ada"),
		}
		for _, name := range []string{"creator", "lock holder", "human"} {
			who := callers[name]
			for _, from := range everyState {
				for _, confirmed := range []bool{true, false} {
					for _, a := range everyAct() {
						label := fmt.Sprintf("%s/%s %s/%s", name, from, confirmation(confirmed), a.name())
						want := expect(name, a, from, confirmed)
						root := w.must(creator, env{"kind": "ask", "body": "What now?"})
						th := root.Thread.ID
						parent := w.must(bystander, env{"kind": "note", "thread": th, "body": "context"}).Message.ID
						w.setState(th, from, confirmed)
						e := env{"kind": a.kind, "thread": th, "parent": parent, "body": "acting"}
						if a.kind == "mark" {
							e["state"] = string(a.state)
						}
						p, err := w.post(who, e)
						if want.reason != "" {
							if err == nil {
								t.Errorf("%s: accepted, want %s", label, want.reason)
								continue
							}
							var r *services.Refusal
							if !asRefusal(err, &r) || r.Reason != want.reason {
								t.Errorf("%s: got %v, want %s", label, err, want.reason)
							}
							if got := w.thread(th); got.Thread.State != from || got.Thread.MessageCount != 2 {
								t.Errorf("%s: refused post changed the thread: %+v", label, got.Thread)
							}
							continue
						}
						if err != nil {
							t.Errorf("%s: refused %v, want → %s", label, err, want.state)
							continue
						}
						if p.Thread.State != want.state || p.Thread.Confirmed != want.confirmed {
							t.Errorf("%s: thread %s (%s), want %s (%s)", label, p.Thread.State, confirmation(p.Thread.Confirmed), want.state, confirmation(want.confirmed))
						}
						if p.Thread.Confirmed != (p.Thread.StateConfirmedAt != nil) {
							t.Errorf("%s: confirmed %v but state_confirmed_at %v", label, p.Thread.Confirmed, p.Thread.StateConfirmedAt)
						}
					}
				}
			}
		}
	})
}

func confirmation(c bool) string {
	if c {
		return "confirmed"
	}
	return "proposed"
}
