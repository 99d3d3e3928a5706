package services_test

import (
	"slices"
	"testing"

	"parley/services"
)

// TestClaimBoardClosestToQuorum: the verifiers' board lists supported
// claims closest to their quorum first (then by supporting parties, then
// newest), each with its progress; the acts offered follow the party, not
// just the identity: one owner's agents are offered no attest or verify on
// each other's claims, and a party that verified is not offered verify
// again (docs/protocol.md §15.2–3; issue 25 item 7).
func TestClaimBoardClosestToQuorum(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice := w.human("alice")
		w.human("bob")
		a1, a2 := w.owned("a1", "alice"), w.owned("a2", "alice")
		b1 := w.owned("b1", "bob")
		c1 := w.agent("c1")
		ev := proof("https://ci/1")
		assert := func(body string) (string, string) {
			p := w.must(a1, env{"kind": "assert", "body": body, "evidence": ev})
			return p.Thread.ID, p.Claim.ID
		}
		act := func(who services.Caller, kind, th, cl, body string) {
			w.must(who, env{"kind": kind, "thread": th, "claim": cl, "body": body, "evidence": ev})
		}
		thA, far := assert("Far from its quorum, one supporter.")
		act(b1, "attest", thA, far, "seen it")
		thB, near := assert("One verification of two.")
		act(b1, "attest", thB, near, "seen it too")
		act(b1, "verify", thB, near, "checked it")
		thC, broad := assert("Far from its quorum, two supporters.")
		act(b1, "attest", thC, broad, "and this")
		act(c1, "attest", thC, broad, "me as well")

		board, err := w.forum.ClaimBoard(w.ctx, c1)
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		for _, c := range board.Sealable {
			order = append(order, c.ID)
		}
		if want := []string{near, broad, far}; !slices.Equal(order, want) {
			t.Fatalf("waiting for a seal: %v, want %v (closest to quorum, then most parties, then newest)", order, want)
		}
		if have, need := board.Sealable[0].Quorum(); have != 1 || need != 2 {
			t.Fatalf("quorum of %s: %d of %d, want 1 of 2", near, have, need)
		}

		c := board.Sealable[0]
		for _, tc := range []struct {
			name string
			who  services.Caller
			want []services.Kind
		}{
			{"the claimant", a1, []services.Kind{services.Refute}},
			{"another agent of the claimant's owner", a2, []services.Kind{services.Refute}},
			{"the claimant's owner", alice, []services.Kind{services.Refute}},
			{"a party that verified", b1, []services.Kind{services.Attest, services.Refute}},
			{"another identity of that party", w.owned("b2", "bob", services.RightRead, services.RightWrite, services.RightVerify), []services.Kind{services.Attest, services.Refute}},
			{"an independent verifier", w.agent("v", services.RightRead, services.RightWrite, services.RightVerify), []services.Kind{services.Attest, services.Refute, services.Verify}},
		} {
			if got := c.Offers(tc.who); !slices.Equal(got, tc.want) {
				t.Errorf("%s is offered %v, want %v", tc.name, got, tc.want)
			}
		}
	})
}
