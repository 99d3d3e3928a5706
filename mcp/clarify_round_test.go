package mcp_test

import (
	"strings"
	"testing"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

// clarifyRoundScenario is "the clarify round" of errata 2 (docs/protocol.md
// §4): an answer never answers the answerer's own question, so the answer
// to the reply to one's own clarify answers the question one was asked —
// the thread is answered (a model's mark: a proposal) and awaits the
// asker. Then nested rounds, unwinding to the ask. Ids are those a fresh
// world hands out.
func clarifyRoundScenario() []errataStep {
	post := func(who string, args map[string]any, want map[string]any) errataStep {
		return errataStep{step{who, "post", args, ""}, want}
	}
	call := func(who, op string, args map[string]any, want map[string]any) errataStep {
		return errataStep{step{who, op, args, ""}, want}
	}
	open := func(awaits string) map[string]any {
		return map[string]any{"thread.state": "open", "thread.confirmed": true, "thread.awaiting.identity": awaits}
	}
	answered := map[string]any{"thread.state": "answered", "thread.confirmed": false, "thread.state_of_record": "open", "thread.awaiting.identity": "ainotes:alice"}
	return []errataStep{
		// One round: ask → clarify → answer of the clarify → answer of that answer.
		post("alice", map[string]any{"kind": "ask", "to": map[string]any{"identity": "ainotes:bob"}, "body": "Which port does the API use?"},
			map[string]any{"thread.id": "th_1", "message.id": "msg_1", "thread.awaiting.identity": "ainotes:bob"}),
		post("bob", map[string]any{"kind": "clarify", "thread": "th_1", "parent": "msg_1", "body": "In staging or in production?"}, open("ainotes:alice")),
		post("alice", map[string]any{"kind": "answer", "thread": "th_1", "parent": "msg_2", "body": "In production."}, open("ainotes:bob")),
		call("bob", "inbox", nil, map[string]any{"items.*.message.id": "msg_3"}),
		post("bob", map[string]any{"kind": "answer", "thread": "th_1", "parent": "msg_3", "body": "8443 in production."}, answered),
		call("alice", "inbox", nil, map[string]any{"items.*.message.id": "msg_4"}),
		call("bob", "read_thread", map[string]any{"thread": "th_1"}, map[string]any{"thread.state": "answered", "thread.awaiting.identity": "ainotes:alice"}),
		// Nested: ask → clarify → clarify of the clarify → answers unwinding.
		post("alice", map[string]any{"kind": "ask", "body": "Should we cache the index?"}, map[string]any{"thread.id": "th_2", "message.id": "msg_5"}),
		post("bob", map[string]any{"kind": "clarify", "thread": "th_2", "parent": "msg_5", "body": "Which index?"}, open("ainotes:alice")),
		post("alice", map[string]any{"kind": "clarify", "thread": "th_2", "parent": "msg_6", "body": "Do you mean the search one or the claims one?"}, open("ainotes:bob")),
		post("bob", map[string]any{"kind": "answer", "thread": "th_2", "parent": "msg_7", "body": "The search one."}, open("ainotes:alice")),
		post("alice", map[string]any{"kind": "answer", "thread": "th_2", "parent": "msg_8", "body": "Then the search index."}, open("ainotes:bob")),
		post("bob", map[string]any{"kind": "answer", "thread": "th_2", "parent": "msg_9", "body": "Yes: cache it for an hour."}, answered),
		call("alice", "inbox", nil, map[string]any{"items.*.message.id": "msg_10"}),
	}
}

// TestClarifyRoundThroughBothBindings runs the clarify round over HTTP and
// over MCP, each on a fresh world: same answers, byte for byte, and each
// shows what §4 requires.
func TestClarifyRoundThroughBothBindings(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ *gorm.DB) {
		cfg := services.Config{Now: fixedClock}
		dialect := strings.TrimPrefix(t.Name()[strings.LastIndex(t.Name(), "/"):], "/")
		overHTTP, overMCP := newWorld(t, dialect, cfg), newWorld(t, dialect, cfg)
		for i, s := range clarifyRoundScenario() {
			s.sideBySide(t, i, overHTTP, overMCP)
		}
	})
}
