package services_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/models"
	"parley/services"
)

// proof is one piece of evidence, as a client sends it.
func proof(ref string) []map[string]string {
	return []map[string]string{{"kind": "url", "ref": ref}}
}

// claim reads a claim back through get_claim.
func (w *world) claim(id string) services.Claim {
	w.t.Helper()
	reader := services.Caller{Identity: "test:reader", Kind: services.KindLLM, Rights: []services.Right{services.RightRead}}
	v, err := w.forum.GetClaim(w.ctx, reader, id)
	if err != nil {
		w.t.Fatalf("get claim %s: %v", id, err)
	}
	return v.Claim
}

// claimEvents lists the claim events of a thread as "cl_N:from→to".
func (w *world) claimEvents(thread string) []string {
	w.t.Helper()
	reader := services.Caller{Identity: "test:reader", Kind: services.KindLLM, Rights: []services.Right{services.RightRead}}
	page, err := w.forum.Events(w.ctx, reader, services.EventsQuery{Thread: thread})
	if err != nil {
		w.t.Fatal(err)
	}
	var out []string
	for _, e := range page.Events {
		if e.Type != "claim" {
			continue
		}
		from := ""
		if e.FromState != nil {
			from = string(*e.FromState)
		}
		if e.Claim == nil || e.Message == nil || e.ConfirmedAt == nil || !e.ConfirmedAt.Equal(e.At) {
			w.t.Fatalf("claim event without claim, message or confirmation: %+v", e)
		}
		out = append(out, *e.Claim+":"+from+"→"+string(e.ToState))
	}
	return out
}

// TestClaimStatusMachine walks a claim up the certainty ladder and down
// again (docs/protocol.md §10): assert, attest, verify, then the Popperian case —
// a verified claim refuted with proof — and what a refuted claim still
// accepts. Every step is checked in the post's answer, in get_claim and
// in the event log.
func TestClaimStatusMachine(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, carol, dave := w.agent("alice"), w.agent("bob"), w.agent("carol"), w.agent("dave")
		vera := w.agent("vera", services.RightRead, services.RightWrite, services.RightVerify)
		vic := w.agent("vic", services.RightRead, services.RightWrite, services.RightVerify)

		a := w.must(alice, env{"kind": "assert", "from": map[string]string{"extension": "w1"},
			"body": "linkd p99 latency is under 40 ms at 1k rps.", "evidence": proof("https://ci.example/bench/41")})
		th, cl := a.Thread.ID, a.Claim.ID
		if cl != "cl_1" || a.Claim.Status != services.Unverified || a.Claim.Statement != a.Message.Body || a.Claim.Thread != th || a.Claim.Message != a.Message.ID {
			t.Fatalf("assert: %+v", a.Claim)
		}
		if a.Message.Claim == nil || *a.Message.Claim != cl || a.Thread.State != services.Open || a.Message.Parent != nil || a.Thread.Title != a.Message.Body {
			t.Fatalf("an assert without thread opens one whose root it is: %+v %+v", a.Message, a.Thread)
		}
		if !awaitingIs(a.Thread.Awaiting, "*", "") || len(a.Claim.Evidence) != 1 || a.Claim.Claimant.Identity != "ainotes:alice" || *a.Claim.Claimant.Extension != "w1" {
			t.Fatalf("assert awaits anyone and keeps its evidence and claimant: %+v %+v", a.Thread.Awaiting, a.Claim)
		}

		steps := []struct {
			name   string
			who    services.Caller
			kind   string
			reason services.Reason
			status services.ClaimStatus
		}{
			{"verify needs support first", vera, "verify", services.TransitionInvalid, services.Unverified},
			{"attest: unverified → supported", bob, "attest", "", services.Supported},
			{"a second attest adds support", carol, "attest", "", services.Supported},
			{"one party's verify is short of the quorum of 2", vera, "verify", "", services.Supported},
			{"a second party's verify: supported → verified", vic, "verify", "", services.Verified},
			{"a further verify is no transition", vera, "verify", services.TransitionInvalid, services.Verified},
			{"attest on verified adds support", dave, "attest", "", services.Verified},
			{"Popperian: a verified claim refuted with proof", dave, "refute", "", services.Refuted},
			{"refuted is final for attest", bob, "attest", services.TransitionInvalid, services.Refuted},
			{"refuted is final for verify", vera, "verify", services.TransitionInvalid, services.Refuted},
			{"a further refutation adds a counter-proof", carol, "refute", "", services.Refuted},
		}
		for i, s := range steps {
			e := env{"kind": s.kind, "thread": th, "claim": cl, "body": s.name, "evidence": proof(fmt.Sprintf("https://ci.example/run/%d", i))}
			if s.reason != "" {
				w.refused(s.who, e, s.reason, "claim")
			} else {
				p := w.must(s.who, e)
				if p.Claim == nil || p.Claim.Status != s.status || *p.Message.Claim != cl || *p.Message.Parent != a.Message.ID {
					t.Fatalf("%s: answer %+v, message %+v", s.name, p.Claim, p.Message)
				}
			}
			if got := w.claim(cl).Status; got != s.status {
				t.Fatalf("%s: status %s, want %s", s.name, got, s.status)
			}
		}

		c := w.claim(cl)
		if len(c.Attestations) != 3 || len(c.Refutations) != 2 || c.VerifiedBy == nil || c.VerifiedBy.By.Identity != "ainotes:vic" || len(c.Verifications) != 2 {
			t.Fatalf("claim keeps its acts: %d attestations, %d refutations, verified by %+v", len(c.Attestations), len(c.Refutations), c.VerifiedBy)
		}
		if r := c.Refutations[0]; r.By.Identity != "ainotes:dave" || r.Evidence[0].Ref != "https://ci.example/run/7" || r.Body == "" {
			t.Fatalf("first refutation: %+v", r)
		}
		want := []string{"cl_1:→unverified", "cl_1:unverified→supported", "cl_1:supported→verified", "cl_1:verified→refuted"}
		if got := w.claimEvents(th); !slices.Equal(got, want) {
			t.Fatalf("claim events %v, want %v", got, want)
		}
		// Claim events change the claim, not the thread.
		if got := w.thread(th).Thread; got.State != services.Open || !got.Confirmed {
			t.Fatalf("thread after the claim's life: %+v", got)
		}
	})
}

// TestSupersession: a newer claim replaces older ones; only their
// claimant, a lock holder or a human may name them; a claim is superseded
// once; a superseded claim takes no act; a refuted one stays refuted.
func TestSupersession(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		mod := w.agent("mod", services.RightRead, services.RightWrite, services.RightLock)
		ada := w.human("ada")
		old := w.must(alice, env{"kind": "assert", "body": "The cache holds 10k entries."})
		th := old.Thread.ID
		w.must(bob, env{"kind": "attest", "thread": th, "claim": old.Claim.ID, "body": "Seen.", "evidence": proof("https://x/1")})

		w.refused(bob, env{"kind": "assert", "thread": th, "supersedes": []string{old.Claim.ID}, "body": "Mine replaces it."}, services.ThreadAuthorityMissing, "supersedes")
		w.refused(alice, env{"kind": "assert", "thread": th, "supersedes": []string{"cl_99"}, "body": "x"}, services.ClaimNotFound, "supersedes")

		// The claimant supersedes it from a new thread (cross-thread).
		newer := w.must(alice, env{"kind": "assert", "supersedes": []string{old.Claim.ID}, "body": "The cache holds 20k entries since v2."})
		if got := w.claim(old.Claim.ID); got.Status != services.Superseded || got.SupersededBy == nil || *got.SupersededBy != newer.Claim.ID {
			t.Fatalf("superseded claim: %+v", got)
		}
		if !slices.Equal(newer.Claim.Supersedes, []string{old.Claim.ID}) || newer.Thread.ID == th {
			t.Fatalf("newer claim: %+v", newer.Claim)
		}
		if got := w.claimEvents(th); got[len(got)-1] != old.Claim.ID+":supported→superseded" {
			t.Fatalf("the supersession is an event of the old claim's thread: %v", got)
		}
		for _, kind := range []string{"attest", "refute", "verify"} {
			w.refused(ada, env{"kind": kind, "thread": th, "claim": old.Claim.ID, "body": "x", "evidence": proof("https://x/2")}, services.TransitionInvalid, "claim")
		}
		w.refused(alice, env{"kind": "assert", "supersedes": []string{old.Claim.ID}, "body": "Again."}, services.TransitionInvalid, "supersedes")

		// A lock holder and a human supersede anyone's claim; a refuted
		// claim stays refuted and gains superseded_by.
		bobs := w.must(bob, env{"kind": "assert", "thread": th, "body": "Eviction is LRU."})
		w.must(mod, env{"kind": "assert", "thread": th, "supersedes": []string{bobs.Claim.ID}, "body": "Eviction is LFU since v2."})
		if got := w.claim(bobs.Claim.ID); got.Status != services.Superseded {
			t.Fatalf("lock holder's supersession: %+v", got)
		}
		wrong := w.must(bob, env{"kind": "assert", "thread": th, "body": "TTL is 1 h."})
		w.must(alice, env{"kind": "refute", "thread": th, "claim": wrong.Claim.ID, "body": "It is 10 min.", "evidence": proof("https://x/config")})
		fix := w.must(ada, env{"kind": "assert", "thread": th, "supersedes": []string{wrong.Claim.ID}, "body": "TTL is 10 min."})
		if got := w.claim(wrong.Claim.ID); got.Status != services.Refuted || got.SupersededBy == nil || *got.SupersededBy != fix.Claim.ID {
			t.Fatalf("a superseded refuted claim: %+v", got)
		}
		if got := w.claimEvents(th); slices.Contains(got, wrong.Claim.ID+":refuted→superseded") {
			t.Fatalf("a refuted claim's status changed: %v", got)
		}
	})
}

// clock is a controllable time for services.Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestClaimExpiry: past valid_until a claim on the ladder reads as expired
// (get_claim, list_claims' filter); it can no longer be attested or
// verified, but can be refuted and superseded; refuted keeps its status.
func TestClaimExpiry(t *testing.T) {
	start := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
	clk := &clock{}
	eachWorldWith(t, services.Config{Now: clk.now}, func(t *testing.T, w *world) {
		clk.t = start
		alice, bob := w.agent("alice"), w.agent("bob")
		vera := w.agent("vera", services.RightRead, services.RightWrite, services.RightVerify)
		hour := start.Add(time.Hour).Format(time.RFC3339)

		w.refused(alice, env{"kind": "assert", "body": "x", "valid_until": start.Format(time.RFC3339)}, services.InvalidBody, "valid_until")
		w.refused(alice, env{"kind": "assert", "body": "x", "valid_until": "tomorrow"}, services.InvalidBody, "valid_until")
		a := w.must(alice, env{"kind": "assert", "body": "The staging cert is valid.", "valid_until": hour})
		th := a.Thread.ID
		w2 := map[string]string{"extension": "w2"}
		b := w.must(alice, env{"kind": "assert", "thread": th, "from": w2, "body": "The mirror is in sync.", "valid_until": hour})
		c := w.must(alice, env{"kind": "assert", "thread": th, "from": w2, "body": "No expiry.", "evidence": proof("https://x/c")})
		w.must(bob, env{"kind": "attest", "thread": th, "claim": a.Claim.ID, "body": "Checked.", "evidence": proof("https://x/a")})
		if got := a.Claim.ValidUntil; got == nil || got.Format(time.RFC3339) != hour {
			t.Fatalf("valid_until %v", got)
		}

		clk.advance(time.Hour) // exactly valid_until: expired
		if got := w.claim(a.Claim.ID).Status; got != services.Expired {
			t.Fatalf("at valid_until the claim reads %s", got)
		}
		list := func(status string) []string {
			page, err := w.forum.ListClaims(w.ctx, bob, services.ClaimsQuery{Thread: th, Status: status})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, c := range page.Claims {
				ids = append(ids, c.ID)
			}
			return ids
		}
		if got := list("expired"); !slices.Equal(got, []string{b.Claim.ID, a.Claim.ID}) {
			t.Fatalf("expired: %v", got)
		}
		if got := list("supported"); len(got) != 0 {
			t.Fatalf("an expired claim listed as supported: %v", got)
		}
		if got := list("unverified"); !slices.Equal(got, []string{c.Claim.ID}) {
			t.Fatalf("unverified: %v", got)
		}
		w.refused(bob, env{"kind": "attest", "thread": th, "claim": b.Claim.ID, "body": "x", "evidence": proof("https://x/1")}, services.TransitionInvalid, "claim")
		w.refused(vera, env{"kind": "verify", "thread": th, "claim": a.Claim.ID, "body": "x", "evidence": proof("https://x/1")}, services.TransitionInvalid, "claim")
		r := w.must(bob, env{"kind": "refute", "thread": th, "claim": a.Claim.ID, "body": "It lapsed before expiry.", "evidence": proof("https://x/ocsp")})
		if r.Claim.Status != services.Refuted {
			t.Fatalf("a refuted expired claim reads %s", r.Claim.Status)
		}
		renewed := w.must(alice, env{"kind": "assert", "thread": th, "from": w2, "supersedes": []string{b.Claim.ID}, "body": "The mirror is in sync again.",
			"valid_until": clk.now().Add(time.Hour).Format(time.RFC3339)})
		if got := w.claim(b.Claim.ID); got.Status != services.Superseded || *got.SupersededBy != renewed.Claim.ID {
			t.Fatalf("an expired claim superseded: %+v", got)
		}
		if got := list("expired"); len(got) != 0 {
			t.Fatalf("expired after refute and supersede: %v", got)
		}
	})
}

// TestClaimAwaiting is §10's awaiting column with errata 1's rule that no
// message awaits its own author: assert awaits anyone, attest and verify
// carry the turn, refute awaits the claimant and reaches its inbox.
func TestClaimAwaiting(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, carol := w.agent("alice"), w.agent("bob"), w.agent("carol")
		ada := w.human("ada")
		th := w.must(alice, env{"kind": "ask", "to": map[string]string{"identity": "ainotes:bob"}, "body": "Is the index used?"}).Thread.ID
		as := w.must(carol, env{"kind": "assert", "thread": th, "from": map[string]string{"extension": "probe"}, "body": "The inbox query uses threads_awaiting_turn.", "evidence": proof("https://x/explain")})
		if !awaitingIs(as.Thread.Awaiting, "*", "") || *as.Message.Parent != w.thread(th).Messages[0].ID {
			t.Fatalf("assert in a thread: awaiting %s, parent %v", str(as.Thread.Awaiting), as.Message.Parent)
		}
		w.must(alice, env{"kind": "clarify", "thread": th, "parent": as.Message.ID, "body": "On PostgreSQL too?"})
		turn := w.thread(th).Thread.Awaiting // carol/probe
		at := w.must(bob, env{"kind": "attest", "thread": th, "claim": as.Claim.ID, "body": "Same plan here.", "evidence": proof("https://x/plan")})
		if !awaitingIs(at.Thread.Awaiting, "ainotes:carol", "probe") || str(at.Thread.Awaiting) != str(turn) {
			t.Fatalf("attest carries the turn: %s, was %s", str(at.Thread.Awaiting), str(turn))
		}
		in, _ := inboxThreads(t, w, carol, services.InboxQuery{Extension: "probe"})
		if !slices.Contains(in, th) {
			t.Fatalf("carol/probe's turn is gone after an attest: %v", in)
		}
		ve := w.must(ada, env{"kind": "verify", "thread": th, "claim": as.Claim.ID, "body": "Confirmed on both.", "evidence": proof("https://x/both")})
		if str(ve.Thread.Awaiting) != str(turn) {
			t.Fatalf("verify carries the turn: %s", str(ve.Thread.Awaiting))
		}
		re := w.must(bob, env{"kind": "refute", "thread": th, "claim": as.Claim.ID, "body": "Not after the migration.", "evidence": proof("https://x/after")})
		if !awaitingIs(re.Thread.Awaiting, "ainotes:carol", "probe") || !awaitingIs(re.Message.Awaiting, "ainotes:carol", "probe") {
			t.Fatalf("refute awaits the claimant: %s", str(re.Thread.Awaiting))
		}
		in, _ = inboxThreads(t, w, carol, services.InboxQuery{Extension: "probe"})
		box, err := w.forum.Inbox(w.ctx, carol, services.InboxQuery{Extension: "probe"})
		if err != nil || !slices.Contains(in, th) || box.Items[len(box.Items)-1].Message.ID != re.Message.ID {
			t.Fatalf("the refutation is not in the claimant's inbox: %v %v", in, err)
		}
		// The claimant refutes its own claim: allowed, and it awaits anyone.
		own := w.must(carol, env{"kind": "refute", "thread": th, "from": map[string]string{"extension": "probe"}, "claim": as.Claim.ID, "body": "Indeed.", "evidence": proof("https://x/again")})
		if !awaitingIs(own.Message.Awaiting, "*", "") {
			t.Fatalf("a refutation of one's own claim awaits %s", str(own.Message.Awaiting))
		}
	})
}

// TestClaimRefusals covers §10's refusals outside the status machine, each
// with its field, and checks that none stores anything.
func TestClaimRefusals(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		ada := w.human("ada")
		a := w.must(alice, env{"kind": "assert", "body": "Port 8443 is free."})
		th := a.Thread.ID
		other := w.must(bob, env{"kind": "assert", "body": "Port 443 belongs to the proxy."})
		locked := w.must(alice, env{"kind": "assert", "body": "Locked claim."})
		w.must(ada, env{"kind": "mark", "thread": locked.Thread.ID, "state": "closed", "body": "Closed."})
		ended := w.must(alice, env{"kind": "assert", "body": "Ended claim."})
		w.must(ada, env{"kind": "mark", "thread": ended.Thread.ID, "state": "obsolete", "body": "Obsolete."})
		ev := proof("https://x/1")

		cases := []struct {
			name   string
			who    services.Caller
			e      env
			reason services.Reason
			field  string
		}{
			{"unknown claim", bob, env{"kind": "attest", "thread": th, "claim": "cl_99", "body": "x", "evidence": ev}, services.ClaimNotFound, "claim"},
			{"claim of another thread", alice, env{"kind": "attest", "thread": th, "claim": other.Claim.ID, "body": "x", "evidence": ev}, services.ParentMismatch, "claim"},
			{"parent of another thread", bob, env{"kind": "attest", "thread": th, "claim": a.Claim.ID, "parent": other.Message.ID, "body": "x", "evidence": ev}, services.ParentMismatch, "parent"},
			{"verify without the right", bob, env{"kind": "verify", "thread": th, "claim": a.Claim.ID, "body": "x", "evidence": ev}, services.TokenRightMissing, ""},
			{"attest in a locked thread", bob, env{"kind": "attest", "thread": locked.Thread.ID, "claim": locked.Claim.ID, "body": "x", "evidence": ev}, services.ThreadLocked, "thread"},
			{"refute in an ended thread", bob, env{"kind": "refute", "thread": ended.Thread.ID, "claim": ended.Claim.ID, "body": "x", "evidence": ev}, services.ThreadEnded, "thread"},
			{"assert in a locked thread", bob, env{"kind": "assert", "thread": locked.Thread.ID, "body": "x"}, services.ThreadLocked, "thread"},
			{"assert replying to itself", alice, env{"kind": "assert", "thread": th, "body": "x"}, services.SelfReply, "parent"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				before := w.tableCounts()
				w.refused(c.who, c.e, c.reason, c.field)
				if after := w.tableCounts(); after != before {
					t.Fatalf("a refused act stored something: %v → %v", before, after)
				}
			})
		}
		// A human verifies without the right, and two humans are two
		// parties: the quorum of 2; a lock holder's supersession of a
		// claim in a closed thread is allowed (it changes the claim, not
		// the thread).
		w.must(bob, env{"kind": "attest", "thread": th, "claim": a.Claim.ID, "body": "Free.", "evidence": ev})
		if p := w.must(ada, env{"kind": "verify", "thread": th, "claim": a.Claim.ID, "body": "Sealed.", "evidence": ev}); p.Claim.Status != services.Supported {
			t.Fatalf("a human's verify, one of 2: %s", p.Claim.Status)
		}
		if p := w.must(w.human("bea"), env{"kind": "verify", "thread": th, "claim": a.Claim.ID, "body": "Sealed too.", "evidence": ev}); p.Claim.Status != services.Verified {
			t.Fatalf("a second human's verify: %s", p.Claim.Status)
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(locked.Claim.ID, "cl_"))
		w.must(alice, env{"kind": "assert", "thread": th, "from": map[string]string{"extension": "w2"}, "supersedes": []int{n}, "body": "Replaces the locked claim (named by number)."})
		if got := w.claim(locked.Claim.ID); got.Status != services.Superseded {
			t.Fatalf("claim in a closed thread: %s", got.Status)
		}
	})
}

// tableCounts counts the rows a post may write.
func (w *world) tableCounts() string {
	w.t.Helper()
	var out []string
	for _, m := range []any{&models.Message{}, &models.Event{}, &models.Claim{}, &models.Evidence{}} {
		var n int64
		w.db.Model(m).Count(&n)
		out = append(out, fmt.Sprint(n))
	}
	return strings.Join(out, "/")
}

// TestListClaims: newest first, filters by thread and status, cursors.
func TestListClaims(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		one := w.must(alice, env{"kind": "assert", "body": "one"})
		two := w.must(alice, env{"kind": "assert", "thread": one.Thread.ID, "from": map[string]string{"extension": "w"}, "body": "two"})
		three := w.must(alice, env{"kind": "assert", "body": "three"})
		w.must(bob, env{"kind": "attest", "thread": one.Thread.ID, "claim": two.Claim.ID, "body": "yes", "evidence": proof("https://x")})

		ids := func(q services.ClaimsQuery) ([]string, *string) {
			page, err := w.forum.ListClaims(w.ctx, bob, q)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, c := range page.Claims {
				out = append(out, c.ID)
			}
			return out, page.Cursor
		}
		all, cursor := ids(services.ClaimsQuery{})
		if !slices.Equal(all, []string{three.Claim.ID, two.Claim.ID, one.Claim.ID}) || cursor != nil {
			t.Fatalf("all: %v cursor %v", all, cursor)
		}
		first, cursor := ids(services.ClaimsQuery{Limit: "2"})
		rest, last := ids(services.ClaimsQuery{Limit: "2", Cursor: *cursor})
		if !slices.Equal(append(first, rest...), all) || last != nil {
			t.Fatalf("pages %v + %v, last cursor %v", first, rest, last)
		}
		if got, _ := ids(services.ClaimsQuery{Thread: one.Thread.ID}); !slices.Equal(got, []string{two.Claim.ID, one.Claim.ID}) {
			t.Fatalf("thread: %v", got)
		}
		if got, _ := ids(services.ClaimsQuery{Status: "supported"}); !slices.Equal(got, []string{two.Claim.ID}) {
			t.Fatalf("supported: %v", got)
		}
		for _, q := range []struct {
			q      services.ClaimsQuery
			reason services.Reason
			field  string
		}{
			{services.ClaimsQuery{Status: "true"}, services.InvalidBody, "status"},
			{services.ClaimsQuery{Thread: "th_99"}, services.ThreadNotFound, "thread"},
			{services.ClaimsQuery{Thread: "x"}, services.InvalidBody, "thread"},
			{services.ClaimsQuery{Cursor: "x"}, services.InvalidBody, "cursor"},
			{services.ClaimsQuery{Limit: "999"}, services.InvalidBody, "limit"},
		} {
			_, err := w.forum.ListClaims(w.ctx, bob, q.q)
			expectRefusal(t, err, q.reason, q.field)
		}
		_, err := w.forum.GetClaim(w.ctx, bob, "cl_42")
		expectRefusal(t, err, services.ClaimNotFound, "claim")
		_, err = w.forum.GetClaim(w.ctx, bob, "msg_1")
		expectRefusal(t, err, services.InvalidBody, "claim")
		_, err = w.forum.GetClaim(w.ctx, services.Caller{}, one.Claim.ID)
		expectRefusal(t, err, services.TokenMissing)
	})
}

// TestFailedClaimActLeavesNothingBehind injects a fault at each write of a
// profile act and checks that nothing of it was stored.
func TestFailedClaimActLeavesNothingBehind(t *testing.T) {
	steps := []struct{ op, table string }{{"create", "claims"}, {"create", "evidence"}, {"update", "claims"}, {"update", "messages"}, {"update", "threads"}}
	for _, step := range steps {
		t.Run(step.op+" "+step.table, func(t *testing.T) {
			eachWorld(t, func(t *testing.T, w *world) {
				alice, bob := w.agent("alice"), w.agent("bob")
				a := w.must(alice, env{"kind": "assert", "body": "q", "evidence": proof("https://x/0")})

				failOn(t, w.db, step.op, step.table)
				failed := 0
				for _, act := range []struct {
					who services.Caller
					e   env
				}{
					{bob, env{"kind": "attest", "thread": a.Thread.ID, "claim": a.Claim.ID, "body": "a", "evidence": proof("https://x/1")}},
					{alice, env{"kind": "assert", "supersedes": []string{a.Claim.ID}, "body": "b", "evidence": proof("https://x/2")}},
				} {
					before := w.tableCounts()
					_, err := w.post(act.who, act.e)
					if err == nil {
						continue // the fault is on a table this act does not write
					}
					if r, unexpected := services.AsRefusal(err); !unexpected || r.Reason != services.Internal {
						t.Fatalf("%s: want an internal fault, got %v", act.e["kind"], err)
					}
					if after := w.tableCounts(); after != before {
						t.Fatalf("a failed %s left traces: %s → %s", act.e["kind"], before, after)
					}
					failed++
				}
				w.db.Callback().Create().Remove("test:fail")
				w.db.Callback().Update().Remove("test:fail")
				if failed == 0 {
					t.Fatal("the fault hit neither act")
				}
				if got := w.claim(a.Claim.ID); got.SupersededBy != nil {
					t.Fatalf("a failed assert superseded the claim: %+v", got)
				}
			})
		})
	}
}

// TestClaimOffers: what the web UI offers on a claim is exactly what Post
// accepts from that caller, for every status and for the claimant, but a
// party's second verify, which counts once.
func TestClaimOffers(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, carol := w.agent("alice"), w.agent("bob"), w.agent("carol")
		vera := w.agent("vera", services.RightRead, services.RightWrite, services.RightVerify)
		ada := w.human("ada")
		callers := map[string]services.Caller{"alice": alice, "bob": bob, "vera": vera, "ada": ada}
		th := w.must(carol, env{"kind": "ask", "body": "Claims?"}).Thread.ID
		n := 0 // every claim's statement differs: the guard refuses a repeated body (§14 rule 1)
		claim := func(setup ...string) string {
			n++
			id := w.must(alice, env{"kind": "assert", "thread": th, "body": fmt.Sprintf("claim %d", n)}).Claim.ID
			for _, kind := range setup {
				who := bob
				if kind == "verify" {
					who = vera
				}
				if kind == "supersede" {
					w.must(alice, env{"kind": "assert", "thread": th, "from": map[string]string{"extension": "n"}, "supersedes": []string{id}, "body": fmt.Sprintf("newer than claim %d", n)})
					continue
				}
				w.must(who, env{"kind": kind, "thread": th, "claim": id, "body": fmt.Sprintf("%s claim %d", kind, n), "evidence": proof("https://x")})
			}
			return id
		}
		for _, setup := range [][]string{nil, {"attest"}, {"attest", "verify"}, {"refute"}, {"supersede"}, {"refute", "supersede"}} {
			id := claim(setup...)
			for name, who := range callers {
				offered := w.claim(id).Offers(who)
				for _, kind := range []services.Kind{services.Attest, services.Refute, services.Verify} {
					// Try it in a transaction rolled back afterwards: the act
					// must be accepted exactly when offered.
					err := w.dryRun(who, env{"kind": string(kind), "thread": th, "claim": id, "body": "try", "evidence": proof("https://y")})
					// The one exception: a party's second verify is accepted,
					// and counts once (§15.3), so it is not offered.
					again := kind == services.Verify && slices.ContainsFunc(w.claim(id).Verifications, func(v services.Verification) bool {
						return services.PartyOf(v.Owner, v.Identity) == who.Party()
					})
					if again && err == nil && !slices.Contains(offered, kind) {
						continue
					}
					if (err == nil) != slices.Contains(offered, kind) {
						t.Fatalf("claim after %v, %s: offered %v, but %s answers %v", setup, name, offered, kind, err)
					}
				}
			}
		}
	})
}

// dryRun posts and undoes the post, leaving the world as it was: it
// answers only whether the post is accepted.
func (w *world) dryRun(who services.Caller, e env) error {
	w.t.Helper()
	tx := w.db.Begin()
	defer tx.Rollback()
	raw, _ := json.Marshal(e)
	_, err := services.New(tx, services.Config{}).Post(w.ctx, who, raw)
	return err
}
