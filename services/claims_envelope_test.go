package services_test

import (
	"strings"
	"testing"

	"parley/services"
)

// TestDialecticEnvelope walks the profile's fields (docs/protocol.md §3, §9,
// §10): evidence and its limits, claim references, supersedes and
// valid_until, and which act may carry which. A refused envelope stores
// nothing.
func TestDialecticEnvelope(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		a := w.must(alice, env{"kind": "assert", "body": "The build is reproducible."})
		th, cl := a.Thread.ID, a.Claim.ID
		item := `{"kind":"commit","ref":"3f2a9c1"}`
		items := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]" }
		attest := func(evidence string) string {
			return `{"kind":"attest","thread":"` + th + `","claim":"` + cl + `","body":"x","evidence":` + evidence + `}`
		}

		accepted := []struct{ name, raw string }{
			{"evidence_max_items proofs", attest(items(8))},
			{"a ref of evidence_ref_max_chars", attest(`[{"kind":"hash","ref":"` + strings.Repeat("a", 2048) + `"}]`)},
			{"a note", attest(`[{"kind":"log","ref":"job 77 line 12","note":"the checksum matches"}]`)},
			{"every evidence kind", attest(`[{"kind":"url","ref":"https://x"},{"kind":"hash","ref":"h"},{"kind":"artifact","ref":"a"},{"kind":"commit","ref":"c"},{"kind":"log","ref":"l"},{"kind":"reproducer","ref":"make"},{"kind":"note","ref":"n"},{"kind":"other","ref":"o"}]`)},
			{"claim as a number", `{"kind":"attest","thread":"` + th + `","claim":` + strings.TrimPrefix(cl, "cl_") + `,"body":"x","evidence":` + items(1) + `}`},
			{"assert with everything", `{"kind":"assert","thread":"` + th + `","body":"y","evidence":` + items(2) + `,"supersedes":[],"valid_until":"2999-01-01T00:00:00+02:00"}`},
			{"assert with an empty evidence list", `{"kind":"assert","thread":"` + th + `","body":"z","evidence":[]}`},
		}
		for _, c := range accepted {
			t.Run("accepts "+c.name, func(t *testing.T) {
				// One body each: the guard refuses a repeated body (§14 rule 1).
				raw := strings.Replace(c.raw, `"body":"`, `"body":"`+c.name+`: `, 1)
				p, err := w.forum.Post(w.ctx, bob, []byte(raw))
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if p.Claim == nil {
					t.Fatalf("no claim in the answer: %+v", p)
				}
			})
		}

		refused := []struct {
			name   string
			raw    string
			field  string
			reason services.Reason
		}{
			{"attest without evidence", `{"kind":"attest","thread":"` + th + `","claim":"` + cl + `","body":"x"}`, "evidence", services.EvidenceRequired},
			{"attest with an empty list", attest(`[]`), "evidence", services.EvidenceRequired},
			{"refute without evidence", `{"kind":"refute","thread":"` + th + `","claim":"` + cl + `","body":"x"}`, "evidence", services.EvidenceRequired},
			{"verify without evidence", `{"kind":"verify","thread":"` + th + `","claim":"` + cl + `","body":"x"}`, "evidence", services.EvidenceRequired},
			{"an opinion: no ref", attest(`[{"kind":"note","note":"I believe it"}]`), "evidence[0].ref", services.InvalidBody},
			{"a blank ref", attest(`[{"kind":"url","ref":"  "}]`), "evidence[0].ref", services.InvalidBody},
			{"a ref over evidence_ref_max_chars", attest(`[{"kind":"hash","ref":"` + strings.Repeat("a", 2049) + `"}]`), "evidence[0].ref", services.InvalidBody},
			{"more than evidence_max_items", attest(items(9)), "evidence", services.InvalidBody},
			{"no kind", attest(`[{"ref":"x"}]`), "evidence[0].kind", services.InvalidBody},
			{"an unknown kind", attest(`[` + item + `,{"kind":"vibe","ref":"x"}]`), "evidence[1].kind", services.InvalidBody},
			{"an unknown proof field", attest(`[{"kind":"url","ref":"x","weight":3}]`), "evidence[0].weight", services.InvalidBody},
			{"a note over body_max_chars", attest(`[{"kind":"url","ref":"x","note":"` + strings.Repeat("n", 501) + `"}]`), "evidence[0].note", services.InvalidBody},
			{"evidence not a list", attest(`{"kind":"url","ref":"x"}`), "evidence", services.InvalidBody},
			{"a proof not an object", attest(`["https://x"]`), "evidence[0]", services.InvalidBody},
			{"null evidence", attest(`null`), "evidence", services.InvalidBody},
			{"a null ref", attest(`[{"kind":"url","ref":null}]`), "evidence[0].ref", services.InvalidBody},
			{"attest without claim", `{"kind":"attest","thread":"` + th + `","body":"x","evidence":` + items(1) + `}`, "claim", services.InvalidBody},
			{"a malformed claim", `{"kind":"attest","thread":"` + th + `","claim":"msg_1","body":"x","evidence":` + items(1) + `}`, "claim", services.InvalidBody},
			{"a null claim", `{"kind":"attest","thread":"` + th + `","claim":null,"body":"x","evidence":` + items(1) + `}`, "claim", services.InvalidBody},
			{"attest without thread", `{"kind":"attest","claim":"` + cl + `","body":"x","evidence":` + items(1) + `}`, "thread", services.InvalidBody},
			{"claim on an assert", `{"kind":"assert","claim":"` + cl + `","body":"x"}`, "claim", services.InvalidBody},
			{"supersedes on an attest", `{"kind":"attest","thread":"` + th + `","claim":"` + cl + `","supersedes":["` + cl + `"],"body":"x","evidence":` + items(1) + `}`, "supersedes", services.InvalidBody},
			{"valid_until on a refute", `{"kind":"refute","thread":"` + th + `","claim":"` + cl + `","valid_until":"2999-01-01T00:00:00Z","body":"x","evidence":` + items(1) + `}`, "valid_until", services.InvalidBody},
			{"evidence on a note", `{"kind":"note","thread":"` + th + `","body":"x","evidence":` + items(1) + `}`, "evidence", services.InvalidBody},
			{"more than supersedes_max_items", `{"kind":"assert","body":"x","supersedes":[1,2,3,4,5,6,7,8,9]}`, "supersedes", services.InvalidBody},
			{"a claim superseded twice", `{"kind":"assert","body":"x","supersedes":["` + cl + `",` + strings.TrimPrefix(cl, "cl_") + `]}`, "supersedes", services.InvalidBody},
			{"supersedes not a list", `{"kind":"assert","body":"x","supersedes":"` + cl + `"}`, "supersedes", services.InvalidBody},
			{"valid_until in the past", `{"kind":"assert","body":"x","valid_until":"2001-01-01T00:00:00Z"}`, "valid_until", services.InvalidBody},
			{"valid_until without a zone", `{"kind":"assert","body":"x","valid_until":"2999-01-01T00:00:00"}`, "valid_until", services.InvalidBody},
			{"valid_until a number", `{"kind":"assert","body":"x","valid_until":32503680000}`, "valid_until", services.InvalidBody},
		}
		for _, c := range refused {
			t.Run("refuses "+c.name, func(t *testing.T) {
				before := w.tableCounts()
				_, err := w.forum.Post(w.ctx, bob, []byte(c.raw))
				expectRefusal(t, err, c.reason, c.field)
				if after := w.tableCounts(); after != before {
					t.Fatalf("a refused post stored something: %s → %s", before, after)
				}
			})
		}
	})
}

// TestSelfAttest: an identity never attests or verifies its own claim,
// from any extension, human or model; it may refute it, even from the
// extension that asserted it (self_attest replaces self_reply there).
func TestSelfAttest(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice := w.agent("alice", services.RightRead, services.RightWrite, services.RightVerify)
		bob, ada := w.agent("bob"), w.human("ada")
		ext := func(e string) map[string]string { return map[string]string{"extension": e} }
		a := w.must(alice, env{"kind": "assert", "from": ext("w1"), "body": "The migration is idempotent."})
		th, cl := a.Thread.ID, a.Claim.ID
		act := func(kind string, from map[string]string) env {
			e := env{"kind": kind, "thread": th, "claim": cl, "body": kind + " x", "evidence": proof("https://x/" + kind)}
			if from != nil {
				e["from"] = from
			}
			return e
		}
		w.refused(alice, act("attest", ext("w1")), services.SelfAttest, "claim")
		w.refused(alice, act("attest", ext("w2")), services.SelfAttest, "claim")
		w.refused(alice, act("attest", nil), services.SelfAttest, "claim")
		w.must(bob, act("attest", nil))
		w.refused(alice, act("verify", ext("w2")), services.SelfAttest, "claim")
		w.refused(alice, act("verify", nil), services.SelfAttest, "claim")
		if p := w.must(alice, act("refute", ext("w1"))); p.Claim.Status != services.Refuted {
			t.Fatalf("refuting one's own claim: %s", p.Claim.Status)
		}

		h := w.must(ada, env{"kind": "assert", "thread": th, "body": "Humans claim too."})
		w.refused(ada, env{"kind": "attest", "thread": th, "claim": h.Claim.ID, "body": "x", "evidence": proof("https://x")}, services.SelfAttest, "claim")
		w.must(bob, env{"kind": "attest", "thread": th, "claim": h.Claim.ID, "body": "x for the human's claim", "evidence": proof("https://x")})
		w.refused(ada, env{"kind": "verify", "thread": th, "claim": h.Claim.ID, "body": "x", "evidence": proof("https://x")}, services.SelfAttest, "claim")
		if p := w.must(alice, env{"kind": "verify", "thread": th, "claim": h.Claim.ID, "body": "x", "evidence": proof("https://x")}); p.Claim.Status != services.Supported {
			t.Fatalf("another identity's verify, one of a quorum of 2: %s", p.Claim.Status)
		}
		vic := w.agent("vic", services.RightRead, services.RightWrite, services.RightVerify)
		if p := w.must(vic, env{"kind": "verify", "thread": th, "claim": h.Claim.ID, "body": "checked too", "evidence": proof("https://x/2")}); p.Claim.Status != services.Verified {
			t.Fatalf("a second independent verify: %s", p.Claim.Status)
		}
	})
}
