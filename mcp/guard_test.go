package mcp_test

import (
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

// guardScenario walks the guard profile (docs/protocol.md §14) through a binding,
// with guard_chain_max 3 and guard_thread_run_max 6: a reply_by deadline
// that escalates, duplicate bodies, a runaway chain and a paused thread
// that a human resumes. "advance" moves the clock by args["minutes"].
func guardScenario() []errataStep {
	post := func(who string, args map[string]any, reason services.Reason, want map[string]any) errataStep {
		return errataStep{step{who, "post", args, reason}, want}
	}
	call := func(who, op string, args map[string]any, want map[string]any) errataStep {
		return errataStep{step{who, op, args, ""}, want}
	}
	note := func(who, thread, body string) errataStep {
		return post(who, map[string]any{"kind": "note", "thread": thread, "from": map[string]any{"extension": "n"}, "body": body}, "", nil)
	}
	return []errataStep{
		call("", "get_manifest", nil, map[string]any{"profiles.2.name": "guard", "profiles.2.limits.guard_chain_max": 3, "limits.reply_by_max_hours": 168,
			"reasons.*.reason": "loop_suspected"}),
		// Rule 4: a deadline passes while the turn is open.
		post("alice", map[string]any{"kind": "ask", "to": map[string]any{"identity": "ainotes:bob"}, "body": "Is the mirror in sync?", "reply_by": "2026-11-30T12:30:00Z"}, "",
			map[string]any{"thread.id": "th_1", "message.reply_by": "2026-11-30T12:30:00Z", "thread.overdue_since": nil}),
		post("alice", map[string]any{"kind": "ask", "body": "x", "reply_by": "2026-12-08T12:00:01Z"}, services.InvalidBody, map[string]any{"error.field": "reply_by"}),
		post("bob", map[string]any{"kind": "note", "thread": "th_1", "body": "x", "reply_by": "2026-11-30T13:00:00Z"}, services.InvalidBody, map[string]any{"error.field": "reply_by"}),
		post("carol", map[string]any{"kind": "note", "thread": "th_1", "body": "bob is on leave."}, "", nil),
		errataStep{step{"", "advance", map[string]any{"minutes": 31}, ""}, nil},
		call("ada", "inbox", nil, map[string]any{"items.0.thread.id": "th_1", "items.0.thread.overdue_since": "2026-11-30T12:30:00Z", "items.0.message.id": "msg_1"}),
		call("mod", "inbox", nil, map[string]any{"items.*.thread.id": "th_1"}),
		call("carol", "inbox", nil, map[string]any{"items": []any{}}),
		call("carol", "get_events", map[string]any{"thread": "th_1"}, map[string]any{
			"events.1.type": "escalate", "events.1.actor.identity": "ainotes:bob", "events.1.message": "msg_1", "events.1.origin": "guard",
			"events.1.at": "2026-11-30T12:31:00Z", "events.1.confirmed_at": nil}),
		post("bob", map[string]any{"kind": "answer", "thread": "th_1", "parent": "msg_1", "body": "In sync since noon."}, "", map[string]any{"thread.overdue_since": nil}),
		call("ada", "inbox", nil, map[string]any{"items": []any{}}),
		// Rule 1: duplicate bodies.
		post("bob", map[string]any{"kind": "note", "thread": "th_1", "body": "  IN SYNC since\tnoon. "}, services.DuplicateBody, map[string]any{"error.field": "body", "error.status": 409}),
		post("ada", map[string]any{"kind": "note", "thread": "th_1", "body": "In sync since noon."}, "", nil),
		post("ada", map[string]any{"kind": "note", "thread": "th_1", "body": "In sync since noon."}, "", nil),
		// Rule 2: a runaway chain.
		post("alice", map[string]any{"kind": "ask", "body": "Tabs or spaces?"}, "", map[string]any{"thread.id": "th_2", "message.id": "msg_6"}),
		post("bob", map[string]any{"kind": "note", "thread": "th_2", "parent": "msg_6", "body": "Tabs."}, "", map[string]any{"message.id": "msg_7"}),
		post("carol", map[string]any{"kind": "note", "thread": "th_2", "parent": "msg_7", "body": "Spaces."}, "", map[string]any{"message.id": "msg_8"}),
		post("alice", map[string]any{"kind": "note", "thread": "th_2", "parent": "msg_8", "body": "Both."}, services.LoopSuspected, map[string]any{"error.field": "parent"}),
		post("mod", map[string]any{"kind": "note", "thread": "th_2", "parent": "msg_8", "body": "Moderator: spaces."}, "", map[string]any{"message.id": "msg_9"}),
		post("alice", map[string]any{"kind": "note", "thread": "th_2", "parent": "msg_9", "body": "Spaces then."}, "", nil),
		// Rule 3: a runaway thread, paused until a human acts.
		post("alice", map[string]any{"kind": "ask", "body": "Release notes?"}, "", map[string]any{"thread.id": "th_3", "thread.guard": "active"}),
		note("bob", "th_3", "one"), note("carol", "th_3", "two"), note("bob", "th_3", "three"), note("carol", "th_3", "four"),
		post("bob", map[string]any{"kind": "note", "thread": "th_3", "from": map[string]any{"extension": "n"}, "body": "five"}, "", map[string]any{"thread.guard": "paused"}),
		post("carol", map[string]any{"kind": "note", "thread": "th_3", "body": "six"}, services.LoopSuspected, map[string]any{"error.field": "thread"}),
		call("carol", "read_thread", map[string]any{"thread": "th_3"}, map[string]any{"thread.guard": "paused"}),
		post("ada", map[string]any{"kind": "note", "thread": "th_3", "body": "Carry on."}, "", map[string]any{"thread.guard": "active"}),
		post("carol", map[string]any{"kind": "note", "thread": "th_3", "body": "six"}, "", nil),
	}
}

// TestGuardThroughBothBindings runs the guard scenario over HTTP and over
// MCP, each on a fresh world with the same clock: same answers, byte for
// byte, and each shows what §14 requires.
func TestGuardThroughBothBindings(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ *gorm.DB) {
		clk := &testClock{t: fixedClock()}
		limits := services.DefaultLimits()
		limits.GuardChainMax, limits.GuardThreadRunMax = 3, 6
		cfg := services.Config{Now: clk.now, Limits: limits}
		dialect := strings.TrimPrefix(t.Name()[strings.LastIndex(t.Name(), "/"):], "/")
		overHTTP, overMCP := newWorld(t, dialect, cfg), newWorld(t, dialect, cfg)
		for _, w := range []*world{overHTTP, overMCP} {
			w.tokens["ada"] = w.srv.humanToken(t, "ada")
		}
		for i, s := range guardScenario() {
			if s.op == "advance" {
				clk.advance(time.Duration(s.args["minutes"].(int)) * time.Minute)
				continue
			}
			s.sideBySide(t, i, overHTTP, overMCP)
		}
	})
}
