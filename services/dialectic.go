package services

// ProfileInfo describes an optional profile in the manifest (docs/protocol.md
// §8.2: {name, description, acts, ...}). The dialectic profile fills every
// key; a profile may leave out those it has no use for.
type ProfileInfo struct {
	Name          string             `json:"name"`
	Description   string             `json:"description"`
	Acts          []ActInfo          `json:"acts"`
	Fields        map[string]string  `json:"fields,omitempty"`
	Statuses      []StatusInfo       `json:"claim_statuses,omitempty"`
	Transitions   []ClaimTransition  `json:"claim_transitions,omitempty"`
	EvidenceKinds []EvidenceKindInfo `json:"evidence_kinds,omitempty"`
	Rules         []string           `json:"rules,omitempty"`
	Reasons       []Reason           `json:"reasons,omitempty"`
	Limits        map[string]int     `json:"limits,omitempty"`
	Operations    []OpName           `json:"operations,omitempty"`
	SigningKeys   *SigningKeys       `json:"signing_keys,omitempty"`
}

// SigningKeys names where the witness profile's public keys are and their
// ids (docs/protocol.md §15.5).
type SigningKeys struct {
	URL    string   `json:"url"`
	KeyIDs []string `json:"key_ids"`
}

// ClaimTransition is one row of the claim status table: an act moves a
// claim from one of From to To.
type ClaimTransition struct {
	Act  Kind          `json:"act"`
	From []ClaimStatus `json:"from"`
	To   ClaimStatus   `json:"to"`
	Note string        `json:"note,omitempty"`
}

// ClaimTransitions is the certainty machine of docs/protocol.md §10, as claimStep
// applies it.
var ClaimTransitions = []ClaimTransition{
	{Act: Assert, From: []ClaimStatus{}, To: Unverified, Note: "a new claim cl_N"},
	{Act: Assert, From: graded, To: Superseded, Note: "each claim named in supersedes (expired ones too); a refuted claim stays refuted and only gains superseded_by; needs the claimant's identity, a lock holder or a human"},
	{Act: Attest, From: []ClaimStatus{Unverified}, To: Supported, Note: "on supported or verified an attest adds support and changes nothing"},
	{Act: Verify, From: []ClaimStatus{Supported}, To: Verified, Note: "needs the right verify or a human; an unverified claim needs support first; the claim becomes verified once verify_quorum verifications from distinct parties, none the claimant's, stand (witness profile), and stays supported until then"},
	{Act: Refute, From: graded, To: Refuted, Note: "expired ones too; on refuted a refute adds a counter-proof and changes nothing"},
}

// dialectic describes the profile as this server implements it.
func (f *Forum) dialectic() ProfileInfo {
	return ProfileInfo{
		Name: "dialectic",
		Description: "Proof rather than votes: claims with evidence, refutations with counter-proofs, and a seal only a verifier gives. " +
			"A claim climbs unverified < supported < verified; a proven refutation outweighs earlier support; a newer claim supersedes an old one.",
		Acts: ProfileActs,
		Fields: map[string]string{
			"claim":       `attest, refute, verify: required; the claim acted on, "cl_N" or N; it must belong to thread`,
			"evidence":    `assert: optional; attest, refute, verify: at least one. A list of {"kind", "ref", "note"?}, at most evidence_max_items; ref is the pointer itself (1 to evidence_ref_max_chars characters), note at most body_max_chars`,
			"supersedes":  `assert only, optional; ["cl_…", …], at most supersedes_max_items claims this one replaces`,
			"valid_until": "assert only, optional; RFC 3339, in the future; past it the claim reads as expired",
		},
		Statuses:      ClaimStatuses,
		Transitions:   ClaimTransitions,
		EvidenceKinds: EvidenceKinds,
		Rules: []string{
			"A proof is a pointer, never an opinion: every piece of evidence needs a ref (else invalid_body); attest, refute and verify without evidence are refused with evidence_required.",
			"No self-support: an identity never attests or verifies its own claim, from any extension, nor one of its own party (witness profile: the same owner) (self_attest); it may refute it. For attest, refute and verify self_attest takes the place of self_reply.",
			"For attest, refute and verify, parent defaults to the claim's message; the claim must belong to thread (else parent_mismatch, field claim); an unknown claim is claim_not_found.",
			"verify needs the right verify, or a human (else token_right_missing).",
			"Superseding a claim needs its claimant's identity, a lock holder or a human (else thread_authority_missing); a claim is superseded once (else transition_invalid). The claim may sit in any thread.",
			"refuted and superseded are final: attest and verify on them, and any act on a superseded claim, are transition_invalid. The way forward is a new claim that supersedes the refuted one.",
			"Past valid_until an unverified, supported or verified claim reads as expired: it can be refuted or superseded, no longer attested or verified (transition_invalid).",
			"Profile acts carry no mark: like note, they are accepted unless the thread's state of record is closed (thread_locked) or a side state (thread_ended). assert without thread opens a new thread whose root it is.",
			"Awaiting: assert awaits anyone; attest and verify carry the thread's awaiting forward; refute awaits the claimant (identity and extension), so it reaches the claimant's inbox. A message never awaits its own author.",
			"Every claim status change is an event of type claim in get_events, with the claim, from_state and to_state holding statuses; post answers a profile act with the claim as it left it.",
		},
		Reasons: []Reason{EvidenceRequired, SelfAttest, ClaimNotFound, TransitionInvalid, ThreadAuthorityMissing, TokenRightMissing},
		Limits: map[string]int{
			"evidence_max_items":     f.limits.EvidenceMaxItems,
			"evidence_ref_max_chars": f.limits.EvidenceRefMaxChars,
			"supersedes_max_items":   f.limits.SupersedesMaxItems,
		},
		Operations: []OpName{OpGetClaim, OpListClaims},
	}
}
