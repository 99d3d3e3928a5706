package services_test

import (
	"fmt"
	"slices"
	"testing"

	"parley/services"
)

// specMarks is the table "Allowed marks" of docs/protocol.md §5 (errata 1),
// written out again here on purpose, so the test does not trust
// services.Transitions: the states each act's mark may leave, confirmed or
// proposed, and (specFromProposed) those it may leave only as a proposal.
var specMarks = map[string][]services.State{
	"answer":        {"open"},
	"decide":        {"open", "answered"},
	"mark closed":   {"answered", "decided"},
	"mark deferred": {"open", "answered", "decided"},
	"mark obsolete": {"open", "answered", "decided"},
	"mark rejected": {"open", "answered", "decided"},
	"reopen":        {"closed", "deferred", "obsolete", "rejected"},
}

var specFromProposed = map[string][]services.State{
	"mark deferred": {"closed"},
	"mark obsolete": {"closed"},
	"mark rejected": {"closed"},
}

var (
	everyState   = []services.State{"open", "answered", "decided", "closed", "deferred", "obsolete", "rejected"}
	sideState    = []services.State{"deferred", "obsolete", "rejected"}
	forwardState = []services.State{"open", "answered", "decided", "closed"}
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

func everyAct() []act {
	acts := []act{{kind: "ask"}, {kind: "answer"}, {kind: "clarify"}, {kind: "note"}, {kind: "propose"}, {kind: "object"}, {kind: "decide"}, {kind: "reopen"}}
	for _, s := range everyState {
		acts = append(acts, act{kind: "mark", state: s})
	}
	return acts
}

// situation is a thread's state of record with, if proposal differs from
// it, a model's proposal pending on top.
type situation struct{ record, proposal services.State }

func (s situation) pending() bool { return s.proposal != s.record }

func (s situation) String() string {
	if s.pending() {
		return fmt.Sprintf("%s proposed on %s", s.proposal, s.record)
	}
	return string(s.record)
}

// reachable lists every situation a thread can be in: a proposal ahead of
// its record on the forward line, a proposed side state on a record that is
// not closed, or a creator's proposed reopen of a confirmed closed.
func reachable() []situation {
	var out []situation
	for _, rec := range everyState {
		out = append(out, situation{rec, rec})
		for _, p := range everyState {
			ahead := slices.Index(forwardState, p) > slices.Index(forwardState, rec) && slices.Contains(forwardState, rec)
			side := slices.Contains(sideState, p) && slices.Contains(forwardState, rec) && rec != "closed"
			if ahead || side || (rec == "closed" && p == "open") {
				out = append(out, situation{rec, p})
			}
		}
	}
	return out
}

// outcome is what the protocol says must happen.
type outcome struct {
	reason    services.Reason // "" when accepted
	state     services.State
	confirmed bool
	record    services.State
}

func rank(s services.State) int { return slices.Index(forwardState, s) }

// expect derives the outcome from the text of docs/protocol.md §5, §5.1, §5.2 and
// §6 (errata 1) for a caller with authority over the thread: the creator
// (a model with write), a lock holder or a human. The act replies to a
// bystander's note under the root ask, so an answer answers that ask —
// unless the creator sends it: an answer never answers the answerer's own
// question (§4, errata 2), so the creator's answers nothing and marks
// nothing.
func expect(caller string, a act, s situation) outcome {
	human, lock := caller == "human", caller == "lock holder"
	rec, cur, pending := s.record, s.proposal, s.pending()
	stay := outcome{state: cur, confirmed: !pending, record: rec}
	switch {
	case a.kind == "reopen":
	case rec == "closed" && a.kind == "mark" && a.state == "closed" && pending: // withdraws the reopen
	case rec == "closed":
		return outcome{reason: services.ThreadLocked}
	case slices.Contains(sideState, rec) && !(a.kind == "mark" && human):
		return outcome{reason: services.ThreadEnded}
	}
	if a.kind == "reopen" && caller == "creator" && (slices.Contains(sideState, rec) || slices.Contains(sideState, cur)) {
		return outcome{reason: services.ThreadAuthorityMissing}
	}
	to := map[string]services.State{"decide": "decided", "mark": a.state, "reopen": "open"}[a.kind]
	if a.kind == "answer" && cur == "open" && !pending && caller != "creator" {
		to = "answered"
	}
	table := func(from services.State, proposed bool) bool {
		return slices.Contains(specMarks[a.name()], from) || proposed && slices.Contains(specFromProposed[a.name()], from)
	}
	switch {
	case to == "":
		return stay
	case pending && to == rec && (a.kind == "mark" || table(cur, pending)): // withdraw
		return outcome{state: rec, confirmed: true, record: rec}
	case human || lock:
		switch {
		case pending && to == cur: // confirm
			return outcome{state: to, confirmed: true, record: to}
		case a.kind == "mark" && human && to == cur:
			return stay
		case a.kind == "mark" && human, table(cur, pending), pending && table(rec, false):
			return outcome{state: to, confirmed: true, record: to}
		}
		return outcome{reason: services.TransitionInvalid}
	case !table(cur, pending):
		return outcome{reason: services.TransitionInvalid}
	case rank(to) >= 0 && rank(rec) >= 0 && rank(to) < rank(rec) && !(a.kind == "reopen" && rec == "closed"):
		return outcome{reason: services.TransitionInvalid}
	}
	return outcome{state: to, confirmed: false, record: rec}
}

// TestActsInEveryState walks every act in every reachable situation, for
// each kind of caller with authority.
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
			for _, s := range reachable() {
				for _, a := range everyAct() {
					label := fmt.Sprintf("%s/%s/%s", name, s, a.name())
					want := expect(name, a, s)
					// Each thread in its own words: one party's template across
					// threads is refused (§14 rule 1, errata 2).
					root := w.must(creator, env{"kind": "ask", "body": "What now? (" + label + ")"})
					th := root.Thread.ID
					parent := w.must(bystander, env{"kind": "note", "thread": th, "body": "context for " + label}).Message.ID
					w.setRecord(th, s.record, s.proposal)
					e := env{"kind": a.kind, "thread": th, "parent": parent, "body": "acting: " + label}
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
						got := w.thread(th).Thread
						if got.State != s.proposal || got.StateOfRecord != s.record || got.MessageCount != 2 {
							t.Errorf("%s: refused post changed the thread: %+v", label, got)
						}
						continue
					}
					if err != nil {
						t.Errorf("%s: refused %v, want → %s", label, err, want.state)
						continue
					}
					got := p.Thread
					if got.State != want.state || got.Confirmed != want.confirmed || got.StateOfRecord != want.record {
						t.Errorf("%s: thread %s (%s, record %s), want %s (%s, record %s)", label,
							got.State, confirmation(got.Confirmed), got.StateOfRecord, want.state, confirmation(want.confirmed), want.record)
					}
					if got.Confirmed != (got.StateConfirmedAt != nil) || got.Confirmed != (got.State == got.StateOfRecord) {
						t.Errorf("%s: confirmed %v, state_confirmed_at %v, state %s, record %s", label, got.Confirmed, got.StateConfirmedAt, got.State, got.StateOfRecord)
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
