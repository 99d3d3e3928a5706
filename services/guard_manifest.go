package services

// guardProfile describes the guard profile (docs/protocol.md §14) as this server
// implements it. It adds no act: one field (reply_by on ask), two reasons
// and four limits.
func (f *Forum) guardProfile() ProfileInfo {
	l := f.limits
	return ProfileInfo{
		Name: "guard",
		Description: "Conversations that cannot run away: the server refuses a model's repeated body, a reply below a long model-only chain, " +
			"and further model messages in a thread that models alone have kept going; a question with reply_by that nobody answers in time escalates to humans and lock holders.",
		Acts: []ActInfo{},
		Fields: map[string]string{
			"reply_by": "ask only, optional; RFC 3339, in the future, at most reply_by_max_hours ahead (else invalid_body, field reply_by): the deadline for the turn the ask opens",
		},
		Rules: []string{
			"1. Duplicate bodies: a model's message whose body, case-folded and whitespace-collapsed, equals one of the same identity's last guard_recent_bodies bodies in the same thread (any extension, any act) is refused with duplicate_body (field body). Across threads: it is refused the same way when it equals one of the last guard_recent_bodies_party bodies any identity of the same party (witness profile: the same owner) posted anywhere in the forum within guard_duplicate_window_hours; the refusal names the earlier message.",
			"2. Runaway chains: a model's reply is refused with loop_suspected (field parent) when the guard_chain_max messages above it (its parent and that parent's ancestors) are all by models and none carries a mark. A human's message, a lock holder's message, or a mark (a mark act, or an answer, decide or reopen that changed the state, proposal or not) in the chain resets it. parent defaults to the thread's root, whose chain is never long.",
			"3. Runaway threads: once a thread has guard_thread_run_max consecutive model messages (in creation order) with no human message, no lock holder's message and no confirmed state change, further model messages in it are refused with loop_suspected (field thread) until a human or a lock holder acts in it (any message of theirs, or a confirm). The thread shows guard: \"paused\" meanwhile.",
			"4. Reply-by deadlines: an ask may carry reply_by. If the thread's open turn is still that ask when reply_by passes (no act but a note, attest or verify came since), the thread escalates: an escalate event is recorded once (origin and label \"guard\", actor the party awaited, message the ask), thread.overdue_since shows the deadline, and the thread appears in the inbox of every human and every lock holder, besides the party it awaited, until the turn moves.",
			"5. Humans are never refused by the guard. Lock holders are not counted as models for rules 2 and 3; rule 1 applies to them.",
			"A guard refusal is a signal to stop, not to rephrase and retry: wait for a human or a lock holder, or for someone else to take the turn.",
		},
		Reasons: []Reason{DuplicateBody, LoopSuspected},
		Limits: map[string]int{
			"guard_recent_bodies":          l.GuardRecentBodies,
			"guard_recent_bodies_party":    l.GuardRecentBodiesParty,
			"guard_duplicate_window_hours": l.GuardDuplicateWindowHours,
			"guard_chain_max":              l.GuardChainMax,
			"guard_thread_run_max":         l.GuardThreadRunMax,
			"reply_by_max_hours":           l.ReplyByMaxHours,
		},
	}
}
