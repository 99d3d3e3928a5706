package services_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/models"
	"parley/services"
)

// witnessConfig is the reference instance of the witness profile, the
// defaults: verify_quorum 2, guard_recent_bodies_party 50
// (docs/protocol.md §14, §15).
func witnessConfig() services.Config {
	return services.Config{Limits: services.DefaultLimits()}
}

// quorumOne is an instance whose policy is §10's single seal.
func quorumOne() services.Config {
	l := services.DefaultLimits()
	l.VerifyQuorum = 1
	return services.Config{Limits: l}
}

// owned creates an agent token owned by the human owner.
func (w *world) owned(handle, owner string, rights ...services.Right) services.Caller {
	w.t.Helper()
	if len(rights) == 0 {
		rights = []services.Right{services.RightRead, services.RightWrite, services.RightVerify}
	}
	tok, err := w.forum.CreateToken(w.ctx, services.TokenRequest{Handle: handle, Rights: rights, Owner: owner})
	if err != nil {
		w.t.Fatalf("create token %s for %s: %v", handle, owner, err)
	}
	return w.auth(tok.Secret)
}

func ownerIs(got *string, want string) bool {
	if want == "" {
		return got == nil
	}
	return got != nil && *got == want
}

// TestOwnersAreShown: every token has an owner and whoami, a message's
// from, the directory and the claim shape show it (§15.1).
func TestOwnersAreShown(t *testing.T) {
	eachWorldWith(t, witnessConfig(), func(t *testing.T, w *world) {
		alice := w.human("alice")
		a1 := w.owned("a1", "alice")
		loner := w.agent("loner")
		for _, c := range []struct {
			who   services.Caller
			owner string
		}{{alice, "human:alice"}, {a1, "human:alice"}, {loner, ""}} {
			me, err := w.forum.Whoami(w.ctx, c.who, services.WhoamiQuery{})
			if err != nil || !ownerIs(me.Owner, c.owner) {
				t.Fatalf("whoami of %s: owner %v, %v; want %q", c.who.Identity, me.Owner, err, c.owner)
			}
		}
		p := w.must(a1, env{"kind": "assert", "body": "the build is green", "evidence": []any{map[string]any{"kind": "url", "ref": "https://ci/1"}}})
		if !ownerIs(p.Message.From.Owner, "human:alice") || !ownerIs(p.Claim.Claimant.Owner, "human:alice") {
			t.Fatalf("from %+v, claimant %+v: want owner human:alice", p.Message.From, p.Claim.Claimant)
		}
		att := w.must(loner, env{"kind": "attest", "thread": p.Thread.ID, "claim": p.Claim.ID, "body": "seen", "evidence": []any{map[string]any{"kind": "url", "ref": "https://ci/2"}}})
		if a := att.Claim.Attestations[0]; a.By.Owner != nil || !ownerIs(att.Message.From.Owner, "") {
			t.Fatalf("an ownerless attester shows owner %v, want null", a.By.Owner)
		}
		dir, err := w.forum.ListIdentities(w.ctx, alice, services.IdentitiesQuery{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"human:alice": "human:alice", a1.Identity: "human:alice", loner.Identity: ""}
		for _, e := range dir.Identities {
			if o, ok := want[e.Identity]; ok && !ownerIs(e.Owner, o) {
				t.Errorf("directory: %s owner %v, want %q", e.Identity, e.Owner, o)
			}
		}
		// A token created on the web UI is owned by the human who created it,
		// whatever the request says.
		web, err := w.forum.CreateTokenAs(w.ctx, alice, services.TokenRequest{Handle: "webbot", Rights: []services.Right{services.RightRead}})
		if err != nil || !ownerIs(web.Token.Owner, "human:alice") {
			t.Fatalf("web token: %+v, %v; want owner human:alice", web.Token, err)
		}
		_, err = w.forum.CreateToken(w.ctx, services.TokenRequest{Handle: "x", Rights: []services.Right{services.RightRead}, Owner: "nobody"})
		expectRefusal(t, err, services.IdentityNotFound, "owner")
	})
}

// TestOwnerEvent: the operator assigns an owner, recorded as an event of
// type owner; what the token posted before keeps the owner it had then.
func TestOwnerEvent(t *testing.T) {
	eachWorldWith(t, witnessConfig(), func(t *testing.T, w *world) {
		w.human("bob")
		tok, err := w.forum.CreateToken(w.ctx, services.TokenRequest{Handle: "drifter", Rights: []services.Right{services.RightRead, services.RightWrite}})
		if err != nil {
			t.Fatal(err)
		}
		drifter := w.auth(tok.Secret)
		before := w.must(drifter, env{"kind": "ask", "body": "whose am I?"})
		ch, err := w.forum.SetTokenOwner(w.ctx, tok.Token.ID, "bob", "operator")
		if err != nil {
			t.Fatal(err)
		}
		if ch.Event.Type != "owner" || ch.Event.From != nil || !ownerIs(ch.Event.To, "human:bob") || !ownerIs(ch.Token.Owner, "human:bob") {
			t.Fatalf("owner change %+v", ch)
		}
		events, err := w.forum.OwnerEvents(w.ctx, tok.Token.ID)
		if err != nil || len(events) != 1 || events[0].ID != ch.Event.ID {
			t.Fatalf("owner events %+v, %v; want the one change", events, err)
		}
		drifter = w.auth(tok.Secret)
		after := w.must(drifter, env{"kind": "note", "thread": before.Thread.ID, "body": "bob's now", "from": map[string]any{"extension": "w2"}})
		view := w.thread(before.Thread.ID)
		if !ownerIs(view.Messages[0].From.Owner, "") || !ownerIs(after.Message.From.Owner, "human:bob") {
			t.Fatalf("history: %v then %v; want null then human:bob", view.Messages[0].From.Owner, after.Message.From.Owner)
		}
		_, err = w.forum.SetTokenOwner(w.ctx, tok.Token.ID, "carol", "operator")
		expectRefusal(t, err, services.IdentityNotFound, "owner")
		var n int64
		w.db.Model(&models.OwnerEvent{}).Count(&n)
		if n != 1 {
			t.Fatalf("%d owner events after a refused change, want 1", n)
		}
	})
}

// TestPartyCannotVouchForItself: three tokens of one owner and one of
// another. The one owner's identities (and the owner) cannot attest or
// verify each other's claims; a claim needs two independent parties to
// become verified (§15.2–3).
func TestPartyCannotVouchForItself(t *testing.T) {
	eachWorldWith(t, witnessConfig(), func(t *testing.T, w *world) {
		alice := w.human("alice")
		w.human("bob")
		a1, a2, a3 := w.owned("a1", "alice"), w.owned("a2", "alice"), w.owned("a3", "alice")
		b1 := w.owned("b1", "bob")
		c1 := w.agent("c1", services.RightRead, services.RightWrite, services.RightVerify) // its own party
		ev := []any{map[string]any{"kind": "url", "ref": "https://ci/run/1"}}
		p := w.must(a1, env{"kind": "assert", "body": "p99 is under 40 ms", "evidence": ev})
		th, cl := p.Thread.ID, p.Claim.ID
		act := func(kind string) env {
			return env{"kind": kind, "thread": th, "claim": cl, "body": kind + " " + fmt.Sprint(len(kind)), "evidence": ev}
		}
		for _, c := range []struct {
			name string
			who  services.Caller
			kind string
		}{
			{"same owner attests", a2, "attest"},
			{"same owner attests (third)", a3, "attest"},
			{"same owner verifies", a3, "verify"},
			{"the owner verifies its agent's claim", alice, "verify"},
			{"the owner attests its agent's claim", alice, "attest"},
		} {
			t.Run(c.name, func(t *testing.T) { w.refused(c.who, act(c.kind), services.SelfAttest, "claim") })
		}
		got := w.must(b1, act("attest")).Claim
		if got.Status != services.Supported || got.SupportParties != 1 {
			t.Fatalf("after bob's attest: %s, %d parties", got.Status, got.SupportParties)
		}
		got = w.must(b1, act("verify")).Claim
		if got.Status != services.Supported || got.VerifyQuorum != 2 || len(got.Verifications) != 1 || got.VerifiedBy != nil ||
			!ownerIs(got.Verifications[0].Owner, "human:bob") {
			t.Fatalf("one party's verify: %+v; want still supported, one verification of bob's", got)
		}
		// A second verify of the same party counts once.
		b2 := w.owned("b2", "bob")
		got = w.must(b2, env{"kind": "verify", "thread": th, "claim": cl, "body": "again", "evidence": ev}).Claim
		if got.Status != services.Supported || len(got.Verifications) != 2 {
			t.Fatalf("bob's second identity: %s with %d verifications; want supported", got.Status, len(got.Verifications))
		}
		got = w.must(c1, env{"kind": "verify", "thread": th, "claim": cl, "body": "independent", "evidence": ev}).Claim
		if got.Status != services.Verified || got.VerifiedBy == nil || got.VerifiedBy.By.Identity != c1.Identity {
			t.Fatalf("a second party's verify: %+v; want verified by %s", got, c1.Identity)
		}
		// The owner's own agents may still refute; a refutation with proof wins.
		got = w.must(a2, act("refute")).Claim
		if got.Status != services.Refuted {
			t.Fatalf("refute after quorum: %s", got.Status)
		}
	})
}

// TestQuorumOneIsTheDialecticProfile: with verify_quorum 1 one independent
// verify seals, as §10 alone; self_attest is still per party.
func TestQuorumOneIsTheDialecticProfile(t *testing.T) {
	eachWorldWith(t, quorumOne(), func(t *testing.T, w *world) {
		w.human("alice")
		a1, a2 := w.owned("a1", "alice"), w.owned("a2", "alice")
		v := w.agent("v", services.RightRead, services.RightWrite, services.RightVerify)
		ev := []any{map[string]any{"kind": "url", "ref": "https://x/1"}}
		p := w.must(a1, env{"kind": "assert", "body": "claim", "evidence": ev})
		w.refused(a2, env{"kind": "attest", "thread": p.Thread.ID, "claim": p.Claim.ID, "body": "me too", "evidence": ev}, services.SelfAttest, "claim")
		w.must(v, env{"kind": "attest", "thread": p.Thread.ID, "claim": p.Claim.ID, "body": "ok", "evidence": ev})
		if got := w.must(v, env{"kind": "verify", "thread": p.Thread.ID, "claim": p.Claim.ID, "body": "sealed", "evidence": ev}).Claim; got.Status != services.Verified {
			t.Fatalf("quorum 1: %s", got.Status)
		}
	})
}

// TestQuorumRace: 50 concurrent verifies and refutes from distinct
// parties on one claim end in one consistent status, with every accepted
// act recorded as a message and every status change as one event.
func TestQuorumRace(t *testing.T) {
	eachWorldWith(t, witnessConfig(), func(t *testing.T, w *world) {
		ev := []any{map[string]any{"kind": "url", "ref": "https://x/1"}}
		claimant := w.agent("claimant")
		p := w.must(claimant, env{"kind": "assert", "body": "race me", "evidence": ev})
		th, cl := p.Thread.ID, p.Claim.ID
		w.must(w.agent("supporter"), env{"kind": "attest", "thread": th, "claim": cl, "body": "yes", "evidence": ev})
		const n = 50
		callers := make([]services.Caller, n)
		for i := range callers {
			callers[i] = w.agent(fmt.Sprintf("p%02d", i), services.RightRead, services.RightWrite, services.RightVerify)
		}
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				kind := "verify"
				if i%5 == 4 {
					kind = "refute"
				}
				_, errs[i] = w.post(callers[i], env{"kind": kind, "thread": th, "claim": cl, "body": fmt.Sprintf("%s %d", kind, i), "evidence": ev})
			}()
		}
		wg.Wait()
		accepted := 0
		for _, err := range errs {
			if err == nil {
				accepted++
			} else if r, _ := services.AsRefusal(err); r == nil || r.Reason != services.TransitionInvalid {
				t.Fatalf("unexpected refusal: %v", err)
			}
		}
		c, err := w.forum.GetClaim(w.ctx, claimant, cl)
		if err != nil {
			t.Fatal(err)
		}
		if c.Claim.Status != services.Refuted || len(c.Claim.Refutations) != 10 {
			t.Fatalf("status %s with %d refutations; want refuted by all 10", c.Claim.Status, len(c.Claim.Refutations))
		}
		if got := len(c.Claim.Verifications) + len(c.Claim.Refutations); got != accepted {
			t.Fatalf("%d acts recorded, %d accepted", got, accepted)
		}
		var acts, toVerified, toRefuted int64
		w.db.Model(&models.Message{}).Where("kind IN ?", []string{"verify", "refute"}).Count(&acts)
		if acts != int64(accepted) {
			t.Fatalf("%d verify and refute messages stored, %d accepted: a refused act left a row", acts, accepted)
		}
		w.db.Model(&models.Event{}).Where("type = 'claim' AND to_state = 'verified'").Count(&toVerified)
		w.db.Model(&models.Event{}).Where("type = 'claim' AND to_state = 'refuted'").Count(&toRefuted)
		if toRefuted != 1 || toVerified > 1 {
			t.Fatalf("events: %d to verified, %d to refuted; want at most one and exactly one", toVerified, toRefuted)
		}
		if toVerified == 1 && (c.Claim.VerifiedBy == nil || len(c.Claim.Verifications) < 2) {
			t.Fatalf("verified once, but verified_by %v with %d verifications", c.Claim.VerifiedBy, len(c.Claim.Verifications))
		}
	})
}

// TestDuplicatesAcrossThreadsPerParty: a template pasted across threads is
// refused per party, naming the earlier message; another party may say it.
func TestDuplicatesAcrossThreadsPerParty(t *testing.T) {
	eachWorldWith(t, witnessConfig(), func(t *testing.T, w *world) {
		w.human("alice")
		w.human("bob")
		a1, a2 := w.owned("a1", "alice"), w.owned("a2", "alice")
		b1 := w.owned("b1", "bob")
		loner := w.agent("loner")
		t1 := w.must(w.agent("asker1"), env{"kind": "ask", "body": "first question"}).Thread.ID
		t2 := w.must(w.agent("asker2"), env{"kind": "ask", "body": "second question"}).Thread.ID
		first := w.must(a1, env{"kind": "note", "thread": t1, "body": "Great post! Check out my site."})
		for _, c := range []struct {
			name   string
			who    services.Caller
			e      env
			reason services.Reason
		}{
			{"same identity, other thread", a1, env{"kind": "note", "thread": t2, "body": "great post!  check out my SITE."}, services.DuplicateBody},
			{"same owner, other identity", a2, env{"kind": "note", "thread": t2, "body": "Great post! Check out my site."}, services.DuplicateBody},
			{"same owner, new thread", a2, env{"kind": "ask", "body": "Great post! Check out my site."}, services.DuplicateBody},
			{"another party", b1, env{"kind": "note", "thread": t2, "body": "Great post! Check out my site."}, ""},
			{"an ownerless party", loner, env{"kind": "note", "thread": t2, "body": "Great post! Check out my site."}, ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := w.post(c.who, c.e)
				if c.reason == "" {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					return
				}
				r := expectRefusal(t, err, c.reason, "body")
				if want := first.Message.ID; !strings.Contains(r.Message, want) {
					t.Fatalf("refusal %q does not name the earlier message %s", r.Message, want)
				}
			})
		}
		// The loner's own second paste is refused too: it is its own party.
		w.refused(loner, env{"kind": "note", "thread": t1, "body": "great post! check out my site."}, services.DuplicateBody, "body")
	})
}

// TestDuplicatesAcrossThreadsCountAndWindow: a party's earlier body is a
// duplicate only while it is among the party's last
// guard_recent_bodies_party bodies and within
// guard_duplicate_window_hours; past either, the same body is new again
// (the probe by hash gates the walk of the last bodies and must not
// change what it finds: services/witness_duplicates.go).
func TestDuplicatesAcrossThreadsCountAndWindow(t *testing.T) {
	start := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
	clk := &clock{t: start}
	cfg := witnessConfig()
	cfg.Limits.GuardRecentBodiesParty, cfg.Now = 3, clk.now
	eachWorldWith(t, cfg, func(t *testing.T, w *world) {
		a := w.agent("paster")
		var threads []string
		for i := range 8 {
			threads = append(threads, w.must(w.agent(fmt.Sprintf("asker%d", i)), env{"kind": "ask", "body": fmt.Sprintf("question %d", i)}).Thread.ID)
		}
		note := func(i int, body string) env { return env{"kind": "note", "thread": threads[i], "body": body} }
		w.must(a, note(0, "The template"))
		w.must(a, note(1, "filler one"))
		w.must(a, note(2, "filler two"))
		// The template is the third body back: among the last three.
		w.refused(a, note(3, "the TEMPLATE"), services.DuplicateBody, "body")
		w.must(a, note(3, "filler three"))
		// Now it is the fourth: new again, and the newest body.
		w.must(a, note(4, "The template"))
		w.refused(a, note(5, "The template"), services.DuplicateBody, "body")

		clk.advance(23 * time.Hour)
		w.refused(a, note(5, "filler three"), services.DuplicateBody, "body")
		clk.advance(2 * time.Hour)
		// Past the window, the last three bodies are not the party's any more.
		w.must(a, note(5, "filler three"))
		w.must(a, note(6, "The template"))
	})
}

// TestManifestAdvertisesTheWitnessProfile: the profile's limits are those
// in force, and the guard lists the limits of duplicates across threads.
func TestManifestAdvertisesTheWitnessProfile(t *testing.T) {
	eachWorldWith(t, witnessConfig(), func(t *testing.T, w *world) {
		m := w.forum.Manifest(w.ctx)
		var p *services.ProfileInfo
		for i := range m.Profiles {
			if m.Profiles[i].Name == "witness" {
				p = &m.Profiles[i]
			}
		}
		if p == nil || p.Limits["verify_quorum"] != 2 || p.Limits["guard_recent_bodies_party"] != 50 || p.Limits["guard_duplicate_window_hours"] != 24 || len(p.Rules) == 0 {
			t.Fatalf("witness profile %+v", p)
		}
		if m.Limits.VerifyQuorum != 2 {
			t.Fatalf("manifest limits %+v: want verify_quorum 2", m.Limits)
		}
	})
}
