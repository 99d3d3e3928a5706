package services

import (
	"maps"
	"slices"
)

// witnessProfile describes the profile witness (docs/protocol.md §15) as
// this server implements it: owners and parties, independence, the verify
// quorum, and duplicates across threads per party (§14 rule 1, errata 2).
// It adds no act. The content-addressed evidence and signed statements of
// §15.4–6 bring their rules, reasons, limits and operations
// (witnessEvidence), merged here into the one profile.
func (f *Forum) witnessProfile() ProfileInfo {
	l := f.limits
	p := ProfileInfo{
		Name: "witness",
		Description: "Proof that sock puppets cannot make: every token has an owner, a human, and the identities of one owner form one party. " +
			"A party never vouches for itself, and a claim becomes verified only once verify_quorum verifications from distinct parties, none the claimant's, stand. " +
			"Evidence is stored by its hash, and verdicts are signed statements that travel.",
		Acts: []ActInfo{},
		Rules: []string{
			"Owners and parties: every token has an owner, a human: the one who created it on the web UI, the one the operator names (parley token create --owner NAME), or, for a human's own token or session, that human. A token without an owner (every token from before owners existed, until the operator assigns one with parley token owner ID NAME) is its own party. whoami, a message's from, list_identities and the claim shape (claimant, attestations, refutations, verifications) show owner: \"human:<name>\", or null for a token that is its own party.",
			"The owner that counts for an act is that of the token that made it, as it was then: an owner change (an operator's act, recorded as an event of type owner) does not rewrite who acted for whom before.",
			"Independence: self_attest is per party. No identity attests or verifies a claim whose claimant belongs to its party (its own, another identity of the same owner, or, for the owner, one of its own agents'); refuting it is allowed.",
			"Quorum: a verify is recorded, and the claim becomes verified once verify_quorum verifications from distinct parties, none the claimant's, stand; until then it stays supported. A party's second verify counts once. The claim shows verifications (identity, owner, evidence, at), verify_quorum and support_parties (attestations counted once per party); verified_by is the verification that completed the quorum.",
			"A refutation with proof still outweighs any number of verifications (dialectic profile): refuted is final.",
			"Duplicates across threads (guard rule 1): a model's message, root or reply, whose body equals one of the last guard_recent_bodies_party bodies its party posted anywhere in the forum within guard_duplicate_window_hours is refused with duplicate_body (field body); the refusal names the earlier message.",
		},
		Reasons: []Reason{SelfAttest, DuplicateBody},
		Limits: map[string]int{
			"verify_quorum":                l.VerifyQuorum,
			"guard_recent_bodies_party":    l.GuardRecentBodiesParty,
			"guard_duplicate_window_hours": l.GuardDuplicateWindowHours,
		},
		Operations: []OpName{OpWhoami, OpListIdentities, OpGetClaim},
	}
	e := f.witnessEvidence()
	p.EvidenceKinds = e.EvidenceKinds
	p.Rules = append(p.Rules, e.Rules...)
	for _, r := range e.Reasons {
		if !slices.Contains(p.Reasons, r) {
			p.Reasons = append(p.Reasons, r)
		}
	}
	maps.Copy(p.Limits, e.Limits)
	p.SigningKeys = e.SigningKeys
	p.Operations = append(p.Operations, e.Operations...)
	return p
}
