package mcp_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

// errataStep is a parity step with what its answer must show: each key is
// a dotted path into the body ("thread.state", "items.0.thread.id").
type errataStep struct {
	step
	want map[string]any
}

// sideBySide runs step i in both worlds and fails the test unless HTTP and
// MCP answer alike, with the step's refusal reason (none if empty) and
// every value it wants.
func (s errataStep) sideBySide(t *testing.T, i int, overHTTP, overMCP *world) {
	t.Helper()
	label := fmt.Sprintf("step %d %s by %s", i, s.op, s.who)
	httpFailed, httpBody := overHTTP.viaHTTP(t, s.step)
	mcpFailed, mcpBody := overMCP.viaMCP(t, s.step)
	if httpFailed != mcpFailed || !sameAnswer(httpBody, mcpBody) {
		t.Fatalf("%s: HTTP and MCP differ\nHTTP %s\nMCP  %s", label, mustJSON(httpBody), mustJSON(mcpBody))
	}
	if reasonOf(httpBody) != string(s.reason) {
		t.Fatalf("%s: reason %q, want %q: %s", label, reasonOf(httpBody), s.reason, mustJSON(httpBody))
	}
	for path, want := range s.want {
		if got := lookup(httpBody, path); !slices.ContainsFunc(got, func(v any) bool { return fmt.Sprint(v) == fmt.Sprint(want) }) {
			t.Fatalf("%s: %s = %v, want %v\n%s", label, path, got, want, mustJSON(httpBody))
		}
	}
}

// errataScenario walks the eight cases of errata 1 (docs/protocol.md §3, §4, §5.2,
// §6, §8) through a binding. Thread and message numbers are those a fresh
// world hands out.
func errataScenario() []errataStep {
	post := func(who string, args map[string]any, reason services.Reason, want map[string]any) errataStep {
		return errataStep{step{who, "post", args, reason}, want}
	}
	call := func(who, op string, args map[string]any, want map[string]any) errataStep {
		return errataStep{step{who, op, args, ""}, want}
	}
	return []errataStep{
		// 1. Answering a clarification awaits the clarifier, marks nothing,
		// and reaches the clarifier's inbox.
		post("alice", map[string]any{"kind": "ask", "body": "Which port?"}, "", map[string]any{"thread.id": "th_1", "message.id": "msg_1"}),
		post("bob", map[string]any{"kind": "clarify", "thread": "th_1", "parent": "msg_1", "body": "For which service?"}, "",
			map[string]any{"message.awaiting.identity": "ainotes:alice"}),
		post("alice", map[string]any{"kind": "answer", "thread": "th_1", "parent": "msg_2", "body": "The API."}, "",
			map[string]any{"thread.state": "open", "thread.confirmed": true, "thread.awaiting.identity": "ainotes:bob"}),
		call("bob", "inbox", nil, map[string]any{"items.0.thread.id": "th_1", "items.0.message.id": "msg_3"}),

		// 2. A model never undoes a human's decision.
		post("alice", map[string]any{"kind": "ask", "body": "Ship on Friday?"}, "", map[string]any{"thread.id": "th_2"}),
		post("bob", map[string]any{"kind": "answer", "thread": "th_2", "body": "Yes."}, "", map[string]any{"thread.state": "answered", "thread.confirmed": false}),
		post("ada", map[string]any{"kind": "decide", "thread": "th_2", "body": "Friday it is."}, "",
			map[string]any{"thread.state": "decided", "thread.confirmed": true, "thread.state_of_record": "decided"}),
		post("alice", map[string]any{"kind": "mark", "thread": "th_2", "state": "rejected", "body": "No."}, "",
			map[string]any{"thread.state": "rejected", "thread.confirmed": false, "thread.state_of_record": "decided"}),
		post("alice", map[string]any{"kind": "reopen", "thread": "th_2", "body": "Again."}, services.ThreadAuthorityMissing, nil),
		post("carol", map[string]any{"kind": "answer", "thread": "th_2", "body": "Still Friday."}, "",
			map[string]any{"thread.state": "rejected", "thread.state_of_record": "decided"}),
		post("alice", map[string]any{"kind": "mark", "thread": "th_2", "state": "decided", "body": "Withdrawn."}, "",
			map[string]any{"thread.state": "decided", "thread.confirmed": true, "thread.state_label": "human:ada"}),
		call("bob", "get_events", map[string]any{"thread": "th_2"}, map[string]any{"events.3.type": "state", "events.3.confirmed_at": nil, "events.4.type": "withdraw", "events.4.to_state": "decided"}),
		post("ada", map[string]any{"kind": "mark", "thread": "th_2", "state": "closed", "body": "Done."}, "", map[string]any{"thread.state_of_record": "closed"}),
		post("alice", map[string]any{"kind": "reopen", "thread": "th_2", "body": "One more thing."}, "",
			map[string]any{"thread.state": "open", "thread.confirmed": false, "thread.state_of_record": "closed"}),
		post("bob", map[string]any{"kind": "note", "thread": "th_2", "body": "Locked?"}, services.ThreadLocked, nil),
		call("mod", "confirm", map[string]any{"thread": "th_2", "state": "open"}, map[string]any{"thread.state_of_record": "open", "thread.confirmed": true}),
		post("bob", map[string]any{"kind": "note", "thread": "th_2", "body": "Unlocked."}, "", nil),

		// 3. A proposed closed is no end: answers are accepted without a
		// mark, and a follow-up ask reaches its addressee.
		post("alice", map[string]any{"kind": "ask", "body": "Rename the repo?"}, "", map[string]any{"thread.id": "th_3"}),
		post("bob", map[string]any{"kind": "answer", "thread": "th_3", "body": "Yes, rename it."}, "", nil),
		post("alice", map[string]any{"kind": "mark", "thread": "th_3", "state": "closed", "body": "Done."}, "", map[string]any{"thread.confirmed": false}),
		post("ada", map[string]any{"kind": "answer", "thread": "th_3", "body": "Keep the name."}, "",
			map[string]any{"thread.state": "closed", "thread.confirmed": false, "thread.state_of_record": "open"}),
		post("carol", map[string]any{"kind": "ask", "thread": "th_3", "to": map[string]any{"identity": "ainotes:bob"}, "body": "Why?"}, "", nil),
		call("bob", "inbox", nil, map[string]any{"items.*.thread.id": "th_3"}),

		// 4. null is not a value.
		post("alice", map[string]any{"kind": "ask", "body": nil}, services.InvalidBody, map[string]any{"error.field": "body"}),

		// 5. An ask inside a decided thread can be answered.
		post("alice", map[string]any{"kind": "ask", "body": "Which license?"}, "", map[string]any{"thread.id": "th_4"}),
		post("ada", map[string]any{"kind": "decide", "thread": "th_4", "body": "MIT."}, "", nil),
		post("carol", map[string]any{"kind": "ask", "thread": "th_4", "body": "Which year in the header?"}, "", nil),
		post("bob", map[string]any{"kind": "answer", "thread": "th_4", "parent": "msg_20", "body": "2026."}, "",
			map[string]any{"thread.state": "decided", "thread.confirmed": true, "message.awaiting.identity": "ainotes:carol"}),

		// 6. The manifest no longer promises "always one open turn".
		call("", "get_manifest", nil, map[string]any{"states.transitions.3.from_proposed.0": "closed"}),

		// 7. A lock holder marks a side state over a proposed closed.
		post("alice", map[string]any{"kind": "ask", "body": "Drop Windows?"}, "", map[string]any{"thread.id": "th_5"}),
		post("bob", map[string]any{"kind": "answer", "thread": "th_5", "body": "Yes, drop it."}, "", nil),
		post("alice", map[string]any{"kind": "mark", "thread": "th_5", "state": "closed", "body": "Closing."}, "", nil),
		post("mod", map[string]any{"kind": "mark", "thread": "th_5", "state": "deferred", "body": "Later."}, "",
			map[string]any{"thread.state": "deferred", "thread.confirmed": true, "thread.state_of_record": "deferred"}),

		// 8. A message never awaits its own author.
		post("ada", map[string]any{"kind": "ask", "body": "Who owns CI?"}, "", map[string]any{"thread.id": "th_6"}),
		post("ada", map[string]any{"kind": "answer", "thread": "th_6", "body": "I do, for now."}, "",
			map[string]any{"message.awaiting.identity": "*", "thread.awaiting.identity": "*"}),
	}
}

// TestErrataThroughBothBindings runs the errata cases over HTTP and over
// MCP, each on a fresh world: same answers on both, and each answer shows
// what the errata require.
func TestErrataThroughBothBindings(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ *gorm.DB) {
		cfg := services.Config{Now: fixedClock}
		dialect := strings.TrimPrefix(t.Name()[strings.LastIndex(t.Name(), "/"):], "/")
		overHTTP, overMCP := newWorld(t, dialect, cfg), newWorld(t, dialect, cfg)
		for _, w := range []*world{overHTTP, overMCP} {
			w.tokens["ada"] = w.srv.humanToken(t, "ada")
		}
		for i, s := range errataScenario() {
			s.sideBySide(t, i, overHTTP, overMCP)
		}
	})
}

// lookup follows a dotted path of keys and list indexes ("*" for every
// element) and returns the values found.
func lookup(v any, path string) []any {
	key, rest, more := strings.Cut(path, ".")
	var next []any
	switch node := v.(type) {
	case map[string]any:
		next = []any{node[key]}
	case []any:
		if key == "*" {
			next = node
		} else if i, err := strconv.Atoi(key); err == nil && i < len(node) {
			next = []any{node[i]}
		}
	}
	if !more {
		return next
	}
	var out []any
	for _, n := range next {
		out = append(out, lookup(n, rest)...)
	}
	return out
}
