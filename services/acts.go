package services

import "slices"

// Kind is a speech act: what a message does (docs/protocol.md §4).
type Kind string

// The nine acts of the core.
const (
	Ask     Kind = "ask"
	Answer  Kind = "answer"
	Clarify Kind = "clarify"
	Note    Kind = "note"
	Propose Kind = "propose"
	Object  Kind = "object"
	Decide  Kind = "decide"
	Mark    Kind = "mark"
	Reopen  Kind = "reopen"
)

// The dialectic profile's acts (docs/protocol.md §10). They are not core acts:
// the manifest lists them under the profile.
const (
	Assert Kind = "assert"
	Attest Kind = "attest"
	Refute Kind = "refute"
	Verify Kind = "verify"
)

// ActInfo describes an act for the manifest.
type ActInfo struct {
	Kind        Kind   `json:"kind"`
	Description string `json:"description"`
	Awaiting    string `json:"awaiting"`
	Mark        string `json:"mark"`
}

// Acts is the table of the nine acts, in the order of docs/protocol.md §4 (errata
// 1). Its texts are all a model reading the manifest learns of the acts, so
// they state every rule that decides who is awaited and what is marked.
var Acts = []ActInfo{
	{Ask, "Ask a question. Without `thread` it opens a new thread whose root it is; `to` may address one identity (and extension).",
		"`to` if given, else anyone (\"*\")", "new thread → open; inside a thread, none"},
	{Answer, "Answer a question: the nearest ask or clarify at or above `parent` (default the root) that your identity did not write; a clarify answered already in that chain is skipped too, so after a clarify round, answering the reply to your own clarify answers the question you were asked. Never refused for its mark.",
		"the author of the question answered (the thread's creator if there is none)",
		"→ answered when it answers an ask and the thread is open (confirmed); none otherwise: answering a clarify, in an answered or decided thread, or under a pending proposal"},
	{Clarify, "Ask the parent's author for a precision instead of guessing.",
		"the parent's author", "none"},
	{Note, "Add information or a pointer; expects nothing.",
		"unchanged: carries the thread's current awaiting forward", "none"},
	{Propose, "Propose an outcome for the thread to its authority (its creator).",
		"the thread's creator (identity, any extension)", "none"},
	{Object, "Dispute the parent message, saying why.",
		"the parent's author", "none"},
	{Decide, "Record the thread's decision, usually accepting an answer. Needs authority over the thread (creator, lock, human); a model's decide is a proposal.",
		"nobody", "→ decided (allowed from open, answered)"},
	{Mark, "Set the thread's state named in `state`: closed, or a side state (deferred, obsolete, rejected) from open, answered, decided or a proposed closed; humans may mark any state. Naming the state of record withdraws a pending proposal. Needs authority over the thread.",
		"nobody (open: anyone)", "→ `state`"},
	{Reopen, "Reopen a closed or side-state thread. Closed: its creator (a model creator's reopen is a proposal: the thread stays locked until confirmed), a lock holder or a human; a side state, confirmed or proposed: a lock holder or a human.",
		"anyone", "→ open (allowed from closed, deferred, obsolete, rejected)"},
}

// noSelfAwaiting is the rule every row above obeys, stated once in the
// manifest.
const noSelfAwaiting = "A message never awaits its own author: where a rule would name the author's own (identity, extension), it awaits anyone (\"*\") instead."

// ProfileActs is the table of the dialectic profile's acts, in the order
// of docs/protocol.md §10. None carries a mark: they are messages without a mark
// (§5), accepted unless the state of record is closed or a side state.
var ProfileActs = []ActInfo{
	{Assert, "State a claim (body, the statement) with optional `evidence`, `supersedes` (claims it replaces: yours, or as a lock holder or human anyone's) and `valid_until`. It creates claim cl_N, unverified. Without `thread` it opens a new thread whose root it is.",
		"anyone (\"*\")", "none; new thread → open"},
	{Attest, "Support a claim (`claim`) with at least one piece of `evidence`: unverified → supported; on supported or verified it adds support. Never your own claim (self_attest).",
		"unchanged: carries the thread's current awaiting forward", "none"},
	{Refute, "Refute a claim (`claim`) with at least one piece of `evidence` (a counter-proof): unverified, supported or verified → refuted. You may refute your own claim.",
		"the claimant (identity and extension of the claim's author)", "none"},
	{Verify, "Seal a supported claim (`claim`) as verified, with at least one piece of `evidence`. Needs the right verify, or a human; never your own claim (self_attest).",
		"unchanged: carries the thread's current awaiting forward", "none"},
}

// knownKind reports whether k is a core act or a profile act.
func knownKind(k Kind) bool {
	has := func(a ActInfo) bool { return a.Kind == k }
	return slices.ContainsFunc(Acts, has) || slices.ContainsFunc(ProfileActs, has)
}

// profileAct reports whether k is one of the dialectic profile's acts.
func profileAct(k Kind) bool { return k == Assert || claimAct(k) }

// claimAct reports whether k acts on an existing claim, named in `claim`.
func claimAct(k Kind) bool { return k == Attest || k == Refute || k == Verify }

// carriesTurn reports whether an act carries the thread's turn forward
// instead of opening one (docs/protocol.md §4 note, §10 attest and verify).
func carriesTurn(k Kind) bool { return k == Note || k == Attest || k == Verify }

// authorityAct reports whether an act needs authority over the thread and
// is exempt from self_reply (docs/protocol.md §6, §7).
func authorityAct(k Kind) bool { return k == Decide || k == Mark || k == Reopen }
