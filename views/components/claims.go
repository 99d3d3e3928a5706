package components

import (
	"fmt"
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
	// InPlace: an act's button opens its form under the claim (htmx),
	// else it leads to the claim's page with the form open there.
	InPlace bool
	Form    *ClaimForm    // the form open under the claim (the claim's page, without JavaScript)
	Outcome *ClaimOutcome // what the viewer's act just did, in the form's place
}

// ClaimOutcome is the status line a posted claim form becomes: the act,
// its message, and the claim as it reads after it.
type ClaimOutcome struct {
	Act     services.Kind
	Message string
}

// Progress is the quorum as people read it (docs/protocol.md §15.3):
// "1 of 2 independent verifiers".
func Progress(c services.Claim) string {
	have, need := c.Quorum()
	noun := "verifier"
	if need != 1 {
		noun += "s"
	}
	return fmt.Sprintf("%d of %d independent %s", have, need, noun)
}

// OnLadder reports whether a claim still climbs the ladder, where the
// quorum's progress means something (unverified, supported, verified).
func OnLadder(c services.Claim) bool {
	return slices.Contains(Ladder, c.Status) || len(c.Verifications) > 0
}

// PartyText says whose party a verifier acted for: its owner, or itself.
func PartyText(owner *string, identity string) string {
	if owner == nil || *owner == identity {
		return "its own party"
	}
	return "for " + *owner
}

// OutcomeText is the status line after an act: "You verified cl_3: it is
// supported, 1 of 2 independent verifiers."
func OutcomeText(o ClaimOutcome, c services.Claim) string {
	verb := map[services.Kind]string{services.Attest: "attested", services.Refute: "refuted", services.Verify: "verified"}[o.Act]
	if verb == "" {
		verb = "acted on"
	}
	text := "You " + verb + " " + c.ID + ": it is now " + string(c.Status)
	if o.Act == services.Verify && c.Status == services.Supported {
		text += ", " + Progress(c) + "; another party must verify it too"
	} else if OnLadder(c) && c.Status != services.Refuted {
		text += ", " + Progress(c)
	}
	return text + "."
}

// OutcomeOf finds the act a message made on a claim, for the status line
// of the claim's page after a post without JavaScript; nil when the
// message is none of the claim's acts.
func OutcomeOf(c services.Claim, msg string) *ClaimOutcome {
	for _, v := range c.Verifications {
		if v.Message == msg {
			return &ClaimOutcome{Act: services.Verify, Message: msg}
		}
	}
	for _, a := range c.Attestations {
		if a.Message == msg {
			return &ClaimOutcome{Act: services.Attest, Message: msg}
		}
	}
	for _, r := range c.Refutations {
		if r.Message == msg {
			return &ClaimOutcome{Act: services.Refute, Message: msg}
		}
	}
	return nil
}

// Bytes is a blob's size as people read it.
func Bytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1000/1000)
}

// BlobURL is where a signed-in person downloads a blob: as an attachment,
// never rendered inline (docs/protocol.md §15.4).
func BlobURL(digest string) templ.SafeURL { return templ.URL("/blobs/" + digest) }

// ShortDigest shows a digest by its first hex digits; the whole is in the
// link's title.
func ShortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12] + "…"
	}
	return d
}

// SignatureValid reports whether a statement cited as evidence verified
// against a trusted key (docs/protocol.md §15.6).
func SignatureValid(sig string) bool { return sig != "" && sig != services.SignatureUnverified }

// ClaimPageURL is a claim's own page, with the form for an act open under
// it when act is set.
func ClaimPageURL(c services.Claim, act services.Kind) templ.SafeURL {
	if act == "" {
		return templ.URL("/claims/" + c.ID)
	}
	return templ.URL("/claims/" + c.ID + "?act=" + string(act) + "#act-" + c.ID)
}

// ClaimStatusFilters are the statuses the claims page filters by, "" for
// every claim.
var ClaimStatusFilters = func() []services.ClaimStatus {
	out := []services.ClaimStatus{""}
	for _, s := range services.ClaimStatuses {
		out = append(out, s.Status)
	}
	return out
}()

// FilterLabel names a status filter.
func FilterLabel(s services.ClaimStatus) string {
	if s == "" {
		return "all"
	}
	return string(s)
}

// FilterURL is the claims page in one status ("" for all).
func FilterURL(s services.ClaimStatus) templ.SafeURL {
	if s == "" {
		return templ.URL("/claims#all-claims")
	}
	return templ.URL("/claims?status=" + string(s) + "#all-claims")
}

// ClaimCards prepares a thread's claims for its page. A thread whose state
// of record is closed or a side state takes no claim act, so nothing is
// offered there.
func ClaimCards(th services.Thread, claims map[string]services.Claim, viewer services.Caller) map[string]ClaimCard {
	out := make(map[string]ClaimCard, len(claims))
	for id, c := range claims {
		card := ClaimCard{Claim: c, InPlace: true}
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

// claimFormURL is what an act's button fetches in place: the form, aimed
// at the claim and the act.
func claimFormURL(c services.Claim, act services.Kind, standalone bool) string {
	u := "/threads/" + c.Thread + "/claim?claim=" + c.ID + "&act=" + string(act)
	if standalone {
		u += "&standalone=1"
	}
	return u
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// ActTitle heads the form for an act.
func ActTitle(k services.Kind) string {
	switch k {
	case services.Refute:
		return "Refute"
	case services.Verify:
		return "Verify"
	}
	return "Attest"
}

// ActHint says in one sentence what the act does and what it needs.
func ActHint(k services.Kind) string {
	switch k {
	case services.Refute:
		return "A refutation with a counter-proof brings the claim down, even a verified one. Give the pointer that shows it wrong."
	case services.Verify:
		return "Your verification counts for your party; the claim is verified once enough independent parties have verified it. Give the pointer you checked."
	}
	return "An attestation supports the claim; one owner's identities count once. Give a URL, a hash, a commit, a log line or a command that shows it."
}

// Parties counts parties in words: "1 party", "3 parties".
func Parties(n int) string {
	if n == 1 {
		return "1 party"
	}
	return fmt.Sprintf("%d parties", n)
}
