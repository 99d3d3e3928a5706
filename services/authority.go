package services

import "parley/models"

// admits refuses a message the thread's state does not accept (PARLEY.md
// §5): a confirmed closed thread takes only reopen; a confirmed side state
// takes only reopen and a human's re-mark. A proposed end locks nothing.
func admits(th models.Thread, who Caller, env Envelope) error {
	confirmed := th.StateConfirmedAt != nil
	state := State(th.State)
	switch {
	case !confirmed || env.Kind == Reopen:
		return nil
	case state == Closed:
		return Refuse(ThreadLocked, "thread %s is closed and confirmed: it accepts no message until reopened", ThreadKey(th.ID)).On("thread")
	case IsSide(state) && !(env.Kind == Mark && who.Human()):
		return Refuse(ThreadEnded, "thread %s is %s (confirmed): it accepts only reopen and a human's re-mark", ThreadKey(th.ID), state).On("thread")
	}
	return nil
}

// authorize checks authority for the acts that need it (PARLEY.md §6).
//
// Reading: rule 3 lets only moderation reopen a side-state thread, and §5
// says so "once confirmed". We read both together: the creator may reopen
// its own closed thread, and a side state only while it is still a
// proposal (withdrawing it); a confirmed side state needs a lock holder or
// a human.
func authorize(th models.Thread, who Caller, kind Kind) error {
	if !authorityAct(kind) || who.Human() || who.LockHolder() {
		return nil
	}
	creator := who.Identity == th.CreatedByIdentity
	if kind == Reopen && IsSide(State(th.State)) && th.StateConfirmedAt != nil {
		return Refuse(ThreadAuthorityMissing, "only a lock holder or a human reopens a thread in a confirmed side state").On("kind")
	}
	if !creator {
		return Refuse(ThreadAuthorityMissing, "%s needs authority over thread %s: its creator (%s), a lock holder or a human",
			kind, ThreadKey(th.ID), th.CreatedByIdentity).On("kind")
	}
	return nil
}

// checkTransition refuses a mark the table of PARLEY.md §5 does not allow
// from the thread's current state. A human's mark may set any state (a
// confirmed closed was refused earlier by admits); a lock holder's mark of
// the current unconfirmed state confirms it.
func checkTransition(th models.Thread, who Caller, env Envelope) error {
	to := markOf(env.Kind, env.State)
	from := State(th.State)
	switch {
	case to == "":
		return nil
	case env.Kind == Mark && who.Human():
		return nil
	case env.Kind == Mark && who.LockHolder() && to == from && th.StateConfirmedAt == nil:
		return nil
	case transitionAllowed(actName(env.Kind, to), from, to):
		return nil
	}
	return Refuse(TransitionInvalid, "%s is not allowed on a thread that is %s; see states.transitions in the manifest",
		actName(env.Kind, to), from).On(transitionField(env.Kind))
}

func transitionField(k Kind) string {
	if k == Mark {
		return "state"
	}
	return "kind"
}

// checkSelfReply applies loop protection per (identity, extension)
// (PARLEY.md §7). Authority acts and humans are exempt.
func checkSelfReply(parent models.Message, who Caller, env Envelope) error {
	if authorityAct(env.Kind) || who.Human() {
		return nil
	}
	if parent.AuthorIdentity == who.Identity && parent.AuthorExtension == env.Extension {
		return Refuse(SelfReply, "%s is your own message (same identity and extension); reply from another extension or wait for another participant",
			MessageKey(parent.ID)).On("parent")
	}
	return nil
}

// checkLimits applies the per-thread limits (PARLEY.md §9).
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
