package services_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/secure-systems-lab/go-securesystemslib/signerverifier"

	"parley/services"
)

// independentVerify checks an envelope with securesystemslib's own DSSE
// verifier and Ed25519 verifier, built from the published key set alone:
// nothing of Parley's signing code takes part.
func independentVerify(t *testing.T, keys services.KeySet, env services.SignedEnvelope) error {
	t.Helper()
	var verifiers []dsse.Verifier
	for _, k := range keys.Keys {
		raw, _ := json.Marshal(k)
		var key signerverifier.SSLibKey
		if err := json.Unmarshal(raw, &key); err != nil {
			t.Fatal(err)
		}
		v, err := signerverifier.NewED25519SignerVerifierFromSSLibKey(&key)
		if err != nil {
			t.Fatal(err)
		}
		verifiers = append(verifiers, v)
	}
	ev, err := dsse.NewMultiEnvelopeVerifier(1, verifiers...)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(env)
	var e dsse.Envelope
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	_, err = ev.Verify(t.Context(), &e)
	return err
}

// TestVerdictsAreSignedStatements: a claim verified, then refuted, and a
// thread decided by a human are each signed in their own transaction as an
// in-toto Statement v1 in a DSSE envelope that an independent verifier
// accepts with the published key, and rejects once a byte of the payload
// or the signature changes; the subject digest is the sha256 of the
// predicate's shape in canonical JSON (docs/protocol.md §15.5).
func TestVerdictsAreSignedStatements(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		vera := w.agent("vera", services.RightRead, services.RightWrite, services.RightVerify)
		ada := w.human("ada")
		p := w.must(alice, env{"kind": "assert", "body": "p99 < 40 ms", "evidence": []env{{"kind": "url", "ref": "https://ci/1"}}})
		th, cl := p.Thread.ID, p.Claim.ID
		_, err := w.forum.GetStatement(w.ctx, bob, cl)
		expectRefusal(t, err, services.ClaimNotFound, "id")
		w.must(bob, env{"kind": "attest", "thread": th, "claim": cl, "body": "seen", "evidence": []env{{"kind": "log", "ref": "job 7"}}})
		w.must(vera, env{"kind": "verify", "thread": th, "claim": cl, "body": "sealed", "evidence": []env{{"kind": "log", "ref": "job 8"}}})
		if _, err := w.forum.GetStatement(w.ctx, bob, cl); err == nil {
			t.Fatal("one party's verify, short of the quorum of 2, signed a statement")
		}
		vic := w.agent("vic", services.RightRead, services.RightWrite, services.RightVerify)
		w.must(vic, env{"kind": "verify", "thread": th, "claim": cl, "body": "sealed too", "evidence": []env{{"kind": "log", "ref": "job 8b"}}})
		keys, err := w.forum.Keys(w.ctx)
		if err != nil || len(keys.Keys) != 1 || !keys.Keys[0].Current {
			t.Fatalf("keys %+v %v", keys, err)
		}
		check := func(id, verdict string, decidedBy string) services.Statement {
			t.Helper()
			got, err := w.forum.GetStatement(w.ctx, bob, id)
			if err != nil {
				t.Fatal(err)
			}
			st := got.Statement
			if st.Subject != id || st.Verdict != verdict || st.KeyID != keys.Keys[0].KeyID || st.Envelope.PayloadType != services.PayloadType {
				t.Fatalf("statement %+v", st)
			}
			if err := independentVerify(t, keys, st.Envelope); err != nil {
				t.Fatalf("the independent verifier refuses %s's statement: %v", id, err)
			}
			payload, _ := base64.StdEncoding.DecodeString(st.Envelope.Payload)
			var s struct {
				Type    string `json:"_type"`
				Subject []struct {
					Name   string            `json:"name"`
					Digest map[string]string `json:"digest"`
				} `json:"subject"`
				PredicateType string         `json:"predicateType"`
				Predicate     map[string]any `json:"predicate"`
			}
			if err := json.Unmarshal(payload, &s); err != nil {
				t.Fatal(err)
			}
			pred := s.Predicate
			shape := pred["claim"]
			if shape == nil {
				shape = pred["thread"]
			}
			digest, _ := services.SubjectDigest(shape)
			by, _ := pred["decided_by"].(map[string]any)
			if s.Type != "https://in-toto.io/Statement/v1" || s.PredicateType != services.PredicateType || len(s.Subject) != 1 ||
				s.Subject[0].Name != "parley:ainotes/"+id || s.Subject[0].Digest["sha256"] != digest ||
				pred["verdict"] != verdict || by["identity"] != decidedBy || by["owner"] != ownerWant(decidedBy) {
				t.Fatalf("statement payload %s", payload)
			}
			for _, tamper := range []func(e *services.SignedEnvelope){
				func(e *services.SignedEnvelope) {
					raw, _ := base64.StdEncoding.DecodeString(e.Payload)
					raw[len(raw)/2] ^= 1
					e.Payload = base64.StdEncoding.EncodeToString(raw)
				},
				func(e *services.SignedEnvelope) {
					sig, _ := base64.StdEncoding.DecodeString(e.Signatures[0].Sig)
					sig[0] ^= 1
					e.Signatures = []services.EnvelopeSignature{{KeyID: e.Signatures[0].KeyID, Sig: base64.StdEncoding.EncodeToString(sig)}}
				},
				func(e *services.SignedEnvelope) { e.PayloadType = "application/json" },
			} {
				e := st.Envelope
				tamper(&e)
				if independentVerify(t, keys, e) == nil {
					t.Fatalf("a tampered envelope of %s verifies", id)
				}
			}
			return st
		}
		first := check(cl, "verified", "ainotes:vic")
		w.must(ada, env{"kind": "refute", "thread": th, "claim": cl, "body": "regressed", "evidence": []env{{"kind": "log", "ref": "job 9"}}})
		if second := check(cl, "refuted", "human:ada"); second.ID == first.ID {
			t.Fatal("the refutation did not sign a statement of its own")
		}
		_, err = w.forum.GetStatement(w.ctx, bob, th)
		expectRefusal(t, err, services.ThreadNotFound, "id")
		w.must(ada, env{"kind": "decide", "thread": th, "body": "We ship the fix."})
		check(th, "decided", "human:ada")
		w.must(alice, env{"kind": "mark", "thread": th, "state": "closed", "body": "done"})
		if _, err := w.forum.Confirm(w.ctx, ada, th, []byte(`{"state":"closed"}`)); err != nil {
			t.Fatal(err)
		}
		check(th, "closed", "human:ada")

		// A rotation signs with a new key and keeps the old one published:
		// the old statements still verify.
		newID, err := w.forum.RotateInstanceKey(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		keys, _ = w.forum.Keys(w.ctx)
		if len(keys.Keys) != 2 || keys.Keys[1].KeyID != newID || keys.Keys[0].Current || !keys.Keys[1].Current {
			t.Fatalf("keys after rotation %+v", keys)
		}
		if err := independentVerify(t, keys, first.Envelope); err != nil {
			t.Fatalf("an old statement no longer verifies after a rotation: %v", err)
		}
	})
}

// TestInstanceKeyIsOnePerForum: servers starting at once on one database
// agree on one key, and the manifest names it.
func TestInstanceKeyIsOnePerForum(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() { errs <- services.New(w.db, services.Config{}).EnsureInstanceKey(w.ctx) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		keys, err := w.forum.Keys(w.ctx)
		if err != nil || len(keys.Keys) != 1 {
			t.Fatalf("%d keys after concurrent starts (%v), want 1", len(keys.Keys), err)
		}
		f := services.New(w.db, services.Config{})
		if err := f.EnsureInstanceKey(w.ctx); err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Manifest(w.ctx).Profiles {
			if p.Name == "witness" && (p.SigningKeys == nil || len(p.SigningKeys.KeyIDs) != 1 || p.SigningKeys.KeyIDs[0] != keys.Keys[0].KeyID) {
				t.Fatalf("the manifest names keys %+v, want %s", p.SigningKeys, keys.Keys[0].KeyID)
			}
		}
	})
}

// ownerWant is the owner a statement names for its decider: a human owns
// itself; the test's agents have no owner (§15.1).
func ownerWant(identity string) any {
	if strings.HasPrefix(identity, "human:") {
		return identity
	}
	return nil
}
