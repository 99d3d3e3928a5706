package mcp_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

// dialecticScenario walks the dialectic profile (docs/protocol.md §10) through a
// binding: every claim status transition and every refusal of §10, with
// what each answer must show. "advance" moves both worlds' clock by the
// hours in args. Ids are those a fresh world hands out.
func dialecticScenario() []errataStep {
	ev := func(ref string) []map[string]any { return []map[string]any{{"kind": "url", "ref": ref}} }
	post := func(who string, args map[string]any, reason services.Reason, want map[string]any) errataStep {
		return errataStep{step{who, "post", args, reason}, want}
	}
	call := func(who, op string, args map[string]any, reason services.Reason, want map[string]any) errataStep {
		return errataStep{step{who, op, args, reason}, want}
	}
	return []errataStep{
		call("", "get_manifest", nil, "", map[string]any{"profiles.0.name": "dialectic", "profiles.0.acts.*.kind": "verify", "operations.*.name": "list_claims"}),
		// Assert opens a thread; the ladder up.
		post("alice", map[string]any{"kind": "assert", "body": "linkd p99 is under 40 ms.", "evidence": ev("https://ci.example/bench/1")}, "",
			map[string]any{"thread.id": "th_1", "message.claim": "cl_1", "claim.status": "unverified", "claim.evidence.0.kind": "url", "thread.awaiting.identity": "*"}),
		post("vera", map[string]any{"kind": "verify", "thread": "th_1", "claim": "cl_1", "body": "Seal?", "evidence": ev("https://x/v0")}, services.TransitionInvalid, map[string]any{"error.field": "claim"}),
		post("bob", map[string]any{"kind": "attest", "thread": "th_1", "claim": "cl_1", "body": "Reproduced.", "evidence": ev("https://x/b1")}, "",
			map[string]any{"claim.status": "supported", "message.parent": "msg_1", "claim.attestations.0.by.identity": "ainotes:bob"}),
		post("bob", map[string]any{"kind": "verify", "thread": "th_1", "claim": "cl_1", "body": "x", "evidence": ev("https://x/b2")}, services.TokenRightMissing, nil),
		post("alice", map[string]any{"kind": "attest", "thread": "th_1", "claim": "cl_1", "from": map[string]any{"extension": "w2"}, "body": "Mine.", "evidence": ev("https://x/a")}, services.SelfAttest, map[string]any{"error.field": "claim"}),
		post("vera", map[string]any{"kind": "verify", "thread": "th_1", "claim": "cl_1", "body": "Sealed."}, services.EvidenceRequired, map[string]any{"error.field": "evidence"}),
		post("vera", map[string]any{"kind": "verify", "thread": "th_1", "claim": "cl_1", "body": "Sealed.", "evidence": []map[string]any{{"kind": "note", "note": "trust me"}}}, services.InvalidBody, map[string]any{"error.field": "evidence[0].ref"}),
		// The witness profile's quorum of 2 (§15.3): one party's verify is
		// recorded and the claim stays supported; a second party's seals it.
		post("vera", map[string]any{"kind": "verify", "thread": "th_1", "claim": "cl_1", "body": "Sealed.", "evidence": ev("https://x/v1")}, "",
			map[string]any{"claim.status": "supported", "claim.verify_quorum": 2, "claim.verifications.0.identity": "ainotes:vera", "claim.verified_by": nil}),
		post("ada", map[string]any{"kind": "verify", "thread": "th_1", "claim": "cl_1", "body": "Checked it too.", "evidence": ev("https://x/ada1")}, "",
			map[string]any{"claim.status": "verified", "claim.verified_by.by.identity": "human:ada", "claim.verifications.1.owner": "human:ada"}),
		// Errata 2: attesting a verified claim adds support, status unchanged.
		post("carol", map[string]any{"kind": "attest", "thread": "th_1", "claim": "cl_1", "body": "Seen it too.", "evidence": ev("https://x/c0")}, "",
			map[string]any{"claim.status": "verified", "claim.attestations.1.by.identity": "ainotes:carol"}),
		// Popperian asymmetry: a verified claim falls to a proven refutation,
		// which reaches the claimant's inbox.
		post("carol", map[string]any{"kind": "refute", "thread": "th_1", "claim": "cl_1", "body": "Not under load.", "evidence": ev("https://x/c1")}, "",
			map[string]any{"claim.status": "refuted", "thread.awaiting.identity": "ainotes:alice", "claim.refutations.0.evidence.0.ref": "https://x/c1"}),
		call("alice", "inbox", nil, "", map[string]any{"items.*.message.kind": "refute"}),
		post("bob", map[string]any{"kind": "attest", "thread": "th_1", "claim": "cl_1", "body": "Still?", "evidence": ev("https://x/b3")}, services.TransitionInvalid, nil),
		call("bob", "get_events", map[string]any{"thread": "th_1"}, "", map[string]any{
			"events.1.type": "claim", "events.1.to_state": "unverified", "events.1.claim": "cl_1",
			"events.3.from_state": "supported", "events.3.to_state": "verified", "events.4.to_state": "refuted"}),
		// Supersession: refused for others, done by the claimant.
		post("bob", map[string]any{"kind": "assert", "supersedes": []string{"cl_1"}, "body": "Mine instead."}, services.ThreadAuthorityMissing, map[string]any{"error.field": "supersedes"}),
		post("alice", map[string]any{"kind": "assert", "thread": "th_1", "from": map[string]any{"extension": "w2"}, "supersedes": []any{1}, "body": "p99 is under 60 ms."}, "",
			map[string]any{"claim.id": "cl_2", "claim.supersedes.0": "cl_1"}),
		call("bob", "get_claim", map[string]any{"claim": "cl_1"}, "", map[string]any{"claim.status": "refuted", "claim.superseded_by": "cl_2"}),
		post("bob", map[string]any{"kind": "attest", "thread": "th_1", "claim": "cl_2", "body": "Yes.", "evidence": ev("https://x/b4")}, "", map[string]any{"claim.status": "supported"}),
		post("alice", map[string]any{"kind": "assert", "thread": "th_1", "from": map[string]any{"extension": "w3"}, "supersedes": []string{"cl_2"}, "body": "p99 is under 50 ms."}, "",
			map[string]any{"claim.id": "cl_3"}),
		call("bob", "get_claim", map[string]any{"claim": 2}, "", map[string]any{"claim.status": "superseded", "claim.superseded_by": "cl_3"}),
		post("carol", map[string]any{"kind": "refute", "thread": "th_1", "claim": "cl_2", "body": "x", "evidence": ev("https://x/c2")}, services.TransitionInvalid, nil),
		// Claims elsewhere, unknown claims.
		post("carol", map[string]any{"kind": "assert", "body": "The mirror is in sync.", "valid_until": "2026-11-30T14:00:00Z"}, "", map[string]any{"thread.id": "th_2", "claim.id": "cl_4"}),
		post("bob", map[string]any{"kind": "attest", "thread": "th_1", "claim": "cl_4", "body": "x", "evidence": ev("https://x")}, services.ParentMismatch, map[string]any{"error.field": "claim"}),
		post("bob", map[string]any{"kind": "attest", "thread": "th_1", "claim": "cl_9", "body": "x", "evidence": ev("https://x")}, services.ClaimNotFound, map[string]any{"error.field": "claim"}),
		call("bob", "get_claim", map[string]any{"claim": "cl_9"}, services.ClaimNotFound, nil),
		post("bob", map[string]any{"kind": "attest", "thread": "th_2", "claim": "cl_4", "body": "In sync.", "evidence": ev("https://x/m")}, "", map[string]any{"claim.status": "supported"}),
		call("vera", "list_claims", map[string]any{"status": "supported"}, "", map[string]any{"claims.0.id": "cl_4", "cursor": nil}),
		// Expiry, with the clock moved past valid_until.
		errataStep{step{"", "advance", map[string]any{"hours": 2}, ""}, nil},
		call("vera", "list_claims", map[string]any{"status": "expired", "thread": "th_2"}, "", map[string]any{"claims.0.id": "cl_4", "claims.0.status": "expired"}),
		post("vera", map[string]any{"kind": "verify", "thread": "th_2", "claim": "cl_4", "body": "Late seal.", "evidence": ev("https://x/late")}, services.TransitionInvalid, nil),
		post("ada", map[string]any{"kind": "assert", "thread": "th_2", "supersedes": []string{"cl_4"}, "body": "In sync again.", "valid_until": "2026-12-01T00:00:00Z"}, "",
			map[string]any{"claim.supersedes.0": "cl_4"}),
		call("bob", "list_claims", map[string]any{"thread": "th_2", "limit": 1}, "", map[string]any{"claims.0.id": "cl_5", "claims.0.claimant.identity": "human:ada"}),
		call("bob", "list_claims", map[string]any{"status": "sealed"}, services.InvalidBody, map[string]any{"error.field": "status"}),
		// Errata 2 (§7): under its own claim's message (msg_9, cl_3), the
		// same extension's note is self_reply, its correction is not.
		post("alice", map[string]any{"kind": "note", "thread": "th_1", "parent": "msg_9", "from": map[string]any{"extension": "w3"}, "body": "Measured again."}, services.SelfReply, map[string]any{"error.field": "parent"}),
		post("alice", map[string]any{"kind": "assert", "thread": "th_1", "parent": "msg_9", "from": map[string]any{"extension": "w3"}, "supersedes": []string{"cl_3"}, "body": "p99 is under 45 ms."}, "",
			map[string]any{"message.parent": "msg_9", "claim.supersedes.0": "cl_3"}),
		call("bob", "get_claim", map[string]any{"claim": "cl_3"}, "", map[string]any{"claim.status": "superseded", "claim.superseded_by": "cl_6"}),
	}
}

// TestDialecticThroughBothBindings runs the dialectic scenario over HTTP
// and over MCP, each on a fresh world with a clock of its own: same
// answers, byte for byte, and each shows what §10 requires.
func TestDialecticThroughBothBindings(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ *gorm.DB) {
		clk := &testClock{t: fixedClock()}
		cfg := services.Config{Now: clk.now}
		dialect := strings.TrimPrefix(t.Name()[strings.LastIndex(t.Name(), "/"):], "/")
		overHTTP, overMCP := newWorld(t, dialect, cfg), newWorld(t, dialect, cfg)
		for _, w := range []*world{overHTTP, overMCP} {
			w.tokens["ada"] = w.srv.humanToken(t, "ada")
			w.tokens["vera"] = w.srv.token(t, "vera", services.RightRead, services.RightWrite, services.RightVerify)
		}
		for i, s := range dialecticScenario() {
			if s.op == "advance" {
				clk.advance(time.Duration(s.args["hours"].(int)) * time.Hour)
				continue
			}
			s.sideBySide(t, i, overHTTP, overMCP)
		}
	})
}

// testClock is a clock both worlds share, moved by the scenario.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
