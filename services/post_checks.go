package services

import (
	"time"

	"gorm.io/gorm"

	"parley/models"
)

// replyPlan is what the checks of a reply found, for the writes that
// follow: the locked thread, the parent, the question an answer answers,
// the claim a claim act names, the state change and the claims' work.
type replyPlan struct {
	th       models.Thread
	parent   models.Message
	question *models.Message
	target   *models.Claim
	chg      change
	work     claimWork
	now      time.Time
	hash     string
}

// checkReply is the chain of checks of an envelope inside a thread, in the
// order their refusals take precedence: a new rule goes here, at the place
// its refusal ranks, and nowhere else. Each step reads what it needs; none
// writes (the thread's lock aside), so a refusal leaves nothing behind.
//
//  1. the thread, locked (thread_not_found);
//  2. a claim act's claim (claim_not_found, parent_mismatch), whose
//     message is the default parent (docs/protocol.md §10);
//  3. the parent, with the caller's recent bodies for the guard
//     (message_not_found, parent_mismatch);
//  4. the act in the thread's state of record (thread_locked, thread_ended);
//  5. authority for decide, mark and reopen (thread_authority_missing);
//  6. the question an answer answers (docs/protocol.md §4);
//  7. the state change it makes or proposes (transition_invalid);
//  8. the claims it changes (self_attest per party, transition_invalid,
//     thread_authority_missing; a verify's quorum, docs/protocol.md §15);
//  9. self_reply (docs/protocol.md §7);
//  10. the thread's size and depth (limit_exceeded);
//  11. the guard (duplicate_body, loop_suspected; docs/protocol.md §14).
func (f *Forum) checkReply(tx *gorm.DB, who Caller, env Envelope, superseded []models.Claim) (replyPlan, error) {
	// The thread's lock is the last this transaction takes (those of
	// superseded claims' threads came first, in lockSuperseded), so it may
	// also take the first log position (see lockThreadPG).
	wantEarlyPosition(tx)
	hash := bodyHash(env.Body)
	f.readParentAhead(tx, who, env, hash) // in the lock's round trip, on PostgreSQL
	th, err := lockThread(tx, env.ThreadID)
	if err != nil {
		return replyPlan{}, err
	}
	var target *models.Claim
	var verifiers []string
	parentID := env.ParentID
	if claimAct(env.Kind) {
		c, err := findClaim(tx, th, env.ClaimID)
		if err != nil {
			return replyPlan{}, err
		}
		target = &c
		if env.Kind == Verify {
			if verifiers, err = verifierParties(tx, c); err != nil {
				return replyPlan{}, err
			}
		}
		if parentID == 0 {
			parentID = c.MessageID // docs/protocol.md §10: parent defaults to the claim's message
		}
	}
	now := f.timestamp()
	parent, reads, err := findParent(tx, th, parentID, who.Identity, f.limits.GuardRecentBodies, f.partyProbe(who, hash, now))
	if err != nil {
		return replyPlan{}, err
	}
	if err := admits(th, who, env); err != nil {
		return replyPlan{}, err
	}
	if err := authorize(th, who, env.Kind); err != nil {
		return replyPlan{}, err
	}
	var question *models.Message
	if env.Kind == Answer {
		if question, err = questionAbove(tx, parent, who.Identity); err != nil {
			return replyPlan{}, err
		}
	}
	chg, err := plan(th, who, env.Kind, markOf(th, env, question))
	if err != nil {
		return replyPlan{}, err
	}
	work, err := planClaims(who, env, target, superseded, now, verifiers, f.quorum())
	if err != nil {
		return replyPlan{}, err
	}
	if err := checkSelfReply(parent, who, env, superseded); err != nil {
		return replyPlan{}, err
	}
	if err := f.checkLimits(th, parent); err != nil {
		return replyPlan{}, err
	}
	if err := f.checkGuard(tx, th, parent, who, hash, reads); err != nil {
		return replyPlan{}, err
	}
	return replyPlan{th: th, parent: parent, question: question, target: target, chg: chg, work: work, now: now, hash: hash}, nil
}
