package main

import (
	"fmt"
	"slices"
	"strings"
)

// at opens a thread by alice and brings it, by the lock holder's
// confirmed acts, to state as its state of record.
func (k *kit) at(state string) string {
	th, _ := k.ask("alice")
	step := func(env map[string]any) {
		env["thread"], env["body"] = th, k.body(fmt.Sprint(env["kind"]))
		k.must("mod", env)
	}
	switch state {
	case "open":
	case "answered":
		step(map[string]any{"kind": "answer"})
	case "decided":
		step(map[string]any{"kind": "decide"})
	case "closed":
		step(map[string]any{"kind": "decide"})
		step(map[string]any{"kind": "mark", "state": "closed"})
	default:
		step(map[string]any{"kind": "mark", "state": state})
	}
	t := k.thread(th)
	if str(t, "state") != state || t["confirmed"] != true {
		panic(fmt.Errorf("setup: thread should be confirmed %s: %s", state, show(t)))
	}
	return th
}

// actEnv is the envelope of a transition table's act ("mark closed" is
// kind mark with state closed).
func actEnv(act string) map[string]any {
	kind, state, _ := strings.Cut(act, " ")
	env := map[string]any{"kind": kind}
	if state != "" {
		env["state"] = state
	}
	return env
}

var allStates = []string{"open", "answered", "decided", "closed", "deferred", "obsolete", "rejected"}

// stateChecks walks the manifest's transition table: every act from every
// state, as a lock holder (whose marks are confirmed), where the table
// allows it and where it does not (docs/protocol.md §5).
func stateChecks() []check {
	s := "states"
	out := []check{
		{s, "the manifest's transition table holds the rows of §5", "§5", false, false, func(k *kit) error {
			acts := map[string]string{}
			for _, t := range list(k.manifest, "states", "transitions") {
				acts[str(t, "act")] = str(t, "to")
			}
			want := map[string]string{"answer": "answered", "decide": "decided", "mark closed": "closed", "mark deferred": "deferred",
				"mark obsolete": "obsolete", "mark rejected": "rejected", "reopen": "open"}
			for a, to := range want {
				if acts[a] != to {
					return fmt.Errorf("transition %s → %s missing: %s", a, to, show(acts))
				}
			}
			return nil
		}},
	}
	// The table's rows are read at run time; the checks are named for
	// §5's rows and states, and each looks its row up in the manifest.
	for _, act := range []string{"answer", "decide", "mark closed", "mark deferred", "mark obsolete", "mark rejected", "reopen"} {
		for _, from := range allStates {
			act, from := act, from
			out = append(out, check{s, fmt.Sprintf("%s from a confirmed %s", act, from), "§5", false, false, func(k *kit) error {
				var row map[string]any
				for _, t := range list(k.manifest, "states", "transitions") {
					if str(t, "act") == act {
						row = obj(t)
					}
				}
				if row == nil {
					return fmt.Errorf("no row %q in the manifest's transitions", act)
				}
				th := k.at(from)
				env := actEnv(act)
				env["thread"], env["body"] = th, k.body(act)
				r := k.post("mod", env)
				allowed := slices.Contains(strs(list(row, "from")), from)
				switch {
				case from == "closed" && act != "reopen":
					return refused(r, "thread_locked", "")
				case slices.Contains(sideStates, from) && act != "reopen":
					return refused(r, "thread_ended", "")
				case act == "answer" && !allowed:
					// Never refused for its mark: accepted, state unchanged.
					if err := accepted(r); err != nil {
						return err
					}
					return expect(str(r.Body, "thread", "state") == from, "an answer in %s moved the thread to %s", from, str(r.Body, "thread", "state"))
				case !allowed:
					return refused(r, "transition_invalid", "")
				}
				if err := accepted(r); err != nil {
					return err
				}
				t := obj(r.Body, "thread")
				return expect(str(t, "state") == str(row, "to") && t["confirmed"] == true && str(t, "state_of_record") == str(row, "to"),
					"after %s: state %s confirmed %v record %s, want %s confirmed", act, str(t, "state"), t["confirmed"], str(t, "state_of_record"), str(row, "to"))
			}})
		}
	}
	// The same walk as a model: the creator alice for decide, mark and
	// reopen, bob for answer. Every allowed move is a proposal on top of
	// the state of record (§5.1, §5.2).
	for _, act := range []string{"answer", "decide", "mark closed", "mark deferred", "mark obsolete", "mark rejected", "reopen"} {
		for _, from := range allStates {
			act, from := act, from
			out = append(out, check{s, fmt.Sprintf("a model's %s from a confirmed %s", act, from), "§5, §5.1, §5.2", false, false, func(k *kit) error {
				var row map[string]any
				for _, t := range list(k.manifest, "states", "transitions") {
					if str(t, "act") == act {
						row = obj(t)
					}
				}
				if row == nil {
					return fmt.Errorf("no row %q in the manifest's transitions", act)
				}
				th := k.at(from)
				env := actEnv(act)
				env["thread"], env["body"] = th, k.body(act)
				actor := "alice"
				if act == "answer" {
					actor = "bob"
				}
				r := k.post(actor, env)
				allowed := slices.Contains(strs(list(row, "from")), from)
				switch {
				case from == "closed" && act != "reopen":
					return refused(r, "thread_locked", "")
				case slices.Contains(sideStates, from) && act != "reopen":
					return refused(r, "thread_ended", "")
				case slices.Contains(sideStates, from):
					return refused(r, "thread_authority_missing", "")
				case act == "answer" && !allowed:
					if err := accepted(r); err != nil {
						return err
					}
					return expect(str(r.Body, "thread", "state") == from && r.Body["thread"].(map[string]any)["confirmed"] == true,
						"an answer in %s moved the thread: %s", from, show(r.Body["thread"]))
				case !allowed:
					return refused(r, "transition_invalid", "")
				}
				if err := accepted(r); err != nil {
					return err
				}
				t := obj(r.Body, "thread")
				return expect(str(t, "state") == str(row, "to") && t["confirmed"] == false && str(t, "state_of_record") == from,
					"after a model's %s: state %s confirmed %v record %s, want a proposal of %s on %s", act, str(t, "state"), t["confirmed"], str(t, "state_of_record"), str(row, "to"), from)
			}})
		}
	}
	return append(out,
		check{s, "a new thread's first event is its open (from_state null)", "§5, §8.1", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			r := k.call("alice", "get_events", map[string]any{"thread": th})
			if err := accepted(r); err != nil {
				return err
			}
			e := obj(r.Body, "events", 0)
			return expect(str(e, "type") == "state" && e["from_state"] == nil && str(e, "to_state") == "open", "first event: %s", show(e))
		}},
		check{s, "a model's mark is a proposal", "§5.1", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			_, t := k.must("alice", map[string]any{"kind": "decide", "thread": th, "body": k.body("d")})
			return expect(str(t, "state") == "decided" && t["confirmed"] == false && t["state_confirmed_at"] == nil &&
				str(t, "state_origin") == "llm" && str(t, "state_of_record") == "open",
				"a model's decide: %s", show(t))
		}},
		check{s, "a lock holder's mark is confirmed", "§5.1", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			_, t := k.must("mod", map[string]any{"kind": "decide", "thread": th, "body": k.body("d")})
			return expect(t["confirmed"] == true && t["state_confirmed_at"] != nil && str(t, "state_of_record") == "decided", "a lock holder's decide: %s", show(t))
		}},
		check{s, "a human's mark is confirmed, origin user", "§5.1", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			_, t := k.must("human", map[string]any{"kind": "mark", "state": "deferred", "thread": th, "body": k.body("m")})
			return expect(t["confirmed"] == true && str(t, "state_origin") == "user" && str(t, "state_of_record") == "deferred", "a human's mark: %s", show(t))
		}},
		check{s, "a human may mark backwards", "§5", false, false, func(k *kit) error {
			th := k.at("decided")
			_, t := k.must("human", map[string]any{"kind": "mark", "state": "answered", "thread": th, "body": k.body("m")})
			return expect(str(t, "state") == "answered" && t["confirmed"] == true, "a human's mark answered on decided: %s", show(t))
		}},
		check{s, "a human may re-mark a confirmed side state", "§5", false, false, func(k *kit) error {
			th := k.at("deferred")
			_, t := k.must("human", map[string]any{"kind": "mark", "state": "obsolete", "thread": th, "body": k.body("m")})
			return expect(str(t, "state") == "obsolete", "state %s", str(t, "state"))
		}},
		check{s, "a human's mark on a confirmed closed is thread_locked", "§5", false, false, func(k *kit) error {
			th := k.at("closed")
			return refused(k.post("human", map[string]any{"kind": "mark", "state": "open", "thread": th, "body": k.body("m")}), "thread_locked", "")
		}},
		check{s, "confirm makes the proposal the state of record", "§5.1", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			k.must("alice", map[string]any{"kind": "decide", "thread": th, "body": k.body("d")})
			r := k.call("mod", "confirm", map[string]any{"thread": th, "state": "decided"})
			if err := accepted(r); err != nil {
				return err
			}
			t := obj(r.Body, "thread")
			if err := expect(t["confirmed"] == true && str(t, "state_of_record") == "decided", "after confirm: %s", show(t)); err != nil {
				return err
			}
			ev := list(k.call("alice", "get_events", map[string]any{"thread": th}).Body, "events")
			last := ev[len(ev)-1]
			return expect(str(last, "type") == "confirm" && dig(last, "message") == nil, "the last event should be a confirm with message null: %s", show(last))
		}},
		check{s, "confirm naming another state is state_changed", "§5.1", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			k.must("alice", map[string]any{"kind": "decide", "thread": th, "body": k.body("d")})
			return refused(k.call("mod", "confirm", map[string]any{"thread": th, "state": "closed"}), "state_changed", "")
		}},
		check{s, "confirm without lock is token_right_missing", "§5.1, §6", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			k.must("alice", map[string]any{"kind": "decide", "thread": th, "body": k.body("d")})
			return refused(k.call("bob", "confirm", map[string]any{"thread": th, "state": "decided"}), "token_right_missing", "")
		}},
		check{s, "a human may confirm", "§5.1", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			k.must("alice", map[string]any{"kind": "decide", "thread": th, "body": k.body("d")})
			return accepted(k.call("human", "confirm", map[string]any{"thread": th, "state": "decided"}))
		}},
	)
}
