package components

import (
	"net/url"
	"slices"

	"github.com/a-h/templ"

	"parley/services"
)

// ClaimCard is a claim as a page shows it: its place on the certainty
// ladder, its evidence, attestations, refutations, seal and supersession,
// and the acts the viewer may still take on it.
type ClaimCard struct {
	Claim      services.Claim
	Offers     []services.Kind // attest, refute, verify as the viewer may take them
	Standalone bool            // away from its thread: show the statement and link to the thread
}

// ClaimCards prepares a thread's claims for its page. A thread whose state
// of record is closed or a side state takes no claim act, so nothing is
// offered there.
func ClaimCards(th services.Thread, claims map[string]services.Claim, viewer services.Caller) map[string]ClaimCard {
	out := make(map[string]ClaimCard, len(claims))
	for id, c := range claims {
		card := ClaimCard{Claim: c}
		if !Ended(th) {
			card.Offers = c.Offers(viewer)
		}
		out[id] = card
	}
	return out
}

// Ladder is the certainty ladder, lowest first.
var Ladder = []services.ClaimStatus{services.Unverified, services.Supported, services.Verified}

// StepClass styles one step of the ladder: reached by the claim's acts,
// and whether it is where the claim stands now.
func StepClass(c services.Claim, step services.ClaimStatus) string {
	class := "step"
	if slices.Index(Ladder, step) <= slices.Index(Ladder, c.Reached()) {
		class += " reached"
	}
	if step == c.Status {
		class += " current"
	}
	return class
}

// WebLink is an evidence ref as a link when it is an http or https URL
// with a host; any other ref is shown as text to copy, never as a link.
func WebLink(ref string) (templ.SafeURL, bool) {
	u, err := url.Parse(ref)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	return templ.SafeURL(u.String()), true
}

// ActOf finds the attestation, refutation or seal a message made on a
// claim, for the message's place in the tree.
func ActOf(c services.Claim, msg string) *services.ClaimAct {
	for _, list := range [][]services.ClaimAct{c.Attestations, c.Refutations} {
		for i := range list {
			if list[i].Message == msg {
				return &list[i]
			}
		}
	}
	if c.VerifiedBy != nil && c.VerifiedBy.Message == msg {
		return c.VerifiedBy
	}
	return nil
}

// ActVerb is how a claim act reads in a sentence: "attests cl_3".
func ActVerb(k services.Kind) string {
	switch k {
	case services.Attest:
		return "attests"
	case services.Refute:
		return "refutes"
	case services.Verify:
		return "verifies"
	}
	return "asserts"
}

// ActLabel is the label of the button that opens the form for an act.
func ActLabel(k services.Kind) string {
	switch k {
	case services.Attest:
		return "Attest…"
	case services.Refute:
		return "Refute…"
	}
	return "Verify…"
}

// ClaimActs are the acts on a claim, in the order a form offers them.
var ClaimActs = []services.Kind{services.Attest, services.Refute, services.Verify}

// EvidenceKinds are the kinds a form offers, in the manifest's order.
var EvidenceKinds = func() []services.EvidenceKind {
	out := make([]services.EvidenceKind, len(services.EvidenceKinds))
	for i, k := range services.EvidenceKinds {
		out[i] = k.Kind
	}
	return out
}()

// claimLink is where a claim reference leads: its place in its thread.
func claimLink(id string) templ.SafeURL { return templ.URL("/claims/" + id) }

// claimFormURL opens a thread's page with the form for an act on a claim.
func claimFormURL(c services.Claim, act services.Kind) templ.SafeURL {
	return templ.URL("/threads/" + c.Thread + "?claim=" + c.ID + "&act=" + string(act) + "#reply")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
