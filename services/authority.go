package services

import "parley/models"

// admits refuses a message the thread's state of record does not accept
// (docs/protocol.md §5, §5.2 rule 1): a confirmed closed thread takes only reopen;
// a confirmed side state takes only reopen and a human's re-mark. A pending
// proposal neither locks nor ends the thread, and a pending reopen unlocks
// nothing.
//
// Reading: on a closed thread with a reopen pending, a mark naming closed
// is admitted too: it withdraws the proposal (§5.2 rule 3). Without it
// nobody, not even a human, could turn down a creator's reopen.
func admits(th models.Thread, who Caller, env Envelope) error {
	rec := recordOf(th)
	switch {
	case env.Kind == Reopen:
		return nil
	case rec == Closed && env.Kind == Mark && env.State == Closed && pending(th):
		return nil
	case rec == Closed:
		return Refuse(ThreadLocked, "thread %s is closed (confirmed by %s): it accepts no message until reopened",
			ThreadKey(th.ID), th.RecordConfirmedBy).On("thread")
	case IsSide(rec) && !(env.Kind == Mark && who.Human()):
		return Refuse(ThreadEnded, "thread %s is %s (confirmed by %s): it accepts only reopen and a human's re-mark",
			ThreadKey(th.ID), rec, th.RecordConfirmedBy).On("thread")
	}
	return nil
}

// authorize checks authority for the acts that need it (docs/protocol.md §6):
// the creator, a lock holder or a human. Reopening a side state, confirmed
// or proposed, needs moderation (§5.2 rule 5): a model leaves its own
// proposed side state by marking the state of record instead.
func authorize(th models.Thread, who Caller, kind Kind) error {
	if !authorityAct(kind) || who.Human() || who.LockHolder() {
		return nil
	}
	if kind == Reopen && (IsSide(State(th.State)) || IsSide(recordOf(th))) {
		return Refuse(ThreadAuthorityMissing,
			"only a lock holder or a human reopens a thread in a side state, confirmed or proposed; the thread's authority withdraws its proposal by marking the state of record (%s)",
			th.RecordState).On("kind")
	}
	if who.Identity != th.CreatedByIdentity {
		return Refuse(ThreadAuthorityMissing, "%s needs authority over thread %s: its creator (%s), a lock holder or a human",
			kind, ThreadKey(th.ID), th.CreatedByIdentity).On("kind")
	}
	return nil
}

// checkVerifier: verify needs the right verify, or a human (docs/protocol.md §6).
func checkVerifier(who Caller, kind Kind) error {
	if kind != Verify || who.Human() || who.Has(RightVerify) {
		return nil
	}
	return Refuse(TokenRightMissing, "verify needs the right verify, or a human; your token lacks it")
}

// checkSelfReply applies loop protection per (identity, extension)
// (docs/protocol.md §7). Authority acts and humans are exempt, and for attest,
// refute and verify self_attest (per identity) takes its place (§10). So is
// an assert whose supersedes names only claims of the author's own
// identity (errata 2: a correction is not a loop); superseded are those
// claims, read by lockSuperseded. The guard (§14) still applies to it.
func checkSelfReply(parent models.Message, who Caller, env Envelope, superseded []models.Claim) error {
	if authorityAct(env.Kind) || claimAct(env.Kind) || who.Human() || ownCorrection(who, env, superseded) || mutant("self_reply") {
		return nil
	}
	if parent.AuthorIdentity == who.Identity && parent.AuthorExtension == env.Extension {
		return Refuse(SelfReply, "%s is your own message (same identity and extension): reply to another participant's message, or from another extension; to correct a claim of your own, assert the correction with supersedes naming it",
			MessageKey(parent.ID)).On("parent")
	}
	return nil
}

// ownCorrection reports whether env is an assert superseding only claims
// of the author's own identity (any extension).
func ownCorrection(who Caller, env Envelope, superseded []models.Claim) bool {
	if env.Kind != Assert || len(superseded) == 0 {
		return false
	}
	for _, c := range superseded {
		if c.ClaimantIdentity != who.Identity {
			return false
		}
	}
	return true
}

// checkLimits applies the per-thread limits (docs/protocol.md §9).
func (f *Forum) checkLimits(th models.Thread, parent models.Message) error {
	if th.MessageCount >= f.limits.ThreadMaxMessages {
		return Refuse(LimitExceeded, "thread %s holds %d messages, the most a thread may hold", ThreadKey(th.ID), th.MessageCount).On("thread")
	}
	if parent.Depth+1 > f.limits.ThreadMaxDepth {
		return Refuse(LimitExceeded, "a reply to %s would sit at level %d; threads are at most %d levels deep (the root is level 1)",
			MessageKey(parent.ID), parent.Depth+1, f.limits.ThreadMaxDepth).On("parent")
	}
	return nil
}
