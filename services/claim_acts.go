package services

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"parley/models"
)

// The write path of the dialectic profile (docs/protocol.md §10). Post plans what
// a profile act does to claims with the other checks, before anything is
// written, and records it after the act's message, in the same
// transaction.

// claimWork is what a profile act does to claims.
type claimWork struct {
	target     *models.Claim  // attest, refute, verify: the claim acted on
	to         ClaimStatus    // the target's new status; "" when it keeps it
	superseded []models.Claim // assert: the claims it replaces
}

// lockSuperseded locks the threads of the claims an assert supersedes,
// together with the assert's own thread, in ascending id order, and reads
// the claims under those locks. A claim only changes under its thread's
// lock, and every writer that takes two thread locks takes them in this
// order, so two asserts superseding across the same threads never wait
// on each other in a circle.
func lockSuperseded(tx *gorm.DB, env Envelope) ([]models.Claim, error) {
	if len(env.Supersedes) == 0 {
		return nil, nil
	}
	var found []models.Claim
	if err := tx.Select("id", "thread_id").Where("id IN ?", env.Supersedes).Find(&found).Error; err != nil {
		return nil, fmt.Errorf("find superseded claims: %w", err)
	}
	var threads []int64
	if env.ThreadID != 0 {
		threads = append(threads, env.ThreadID)
	}
	for _, id := range env.Supersedes {
		i := slices.IndexFunc(found, func(c models.Claim) bool { return c.ID == id })
		if i < 0 {
			return nil, claimNotFound(id, "supersedes")
		}
		threads = append(threads, found[i].ThreadID)
	}
	slices.Sort(threads)
	for _, id := range slices.Compact(threads) {
		if _, err := lockThread(tx, id); err != nil {
			return nil, err
		}
	}
	var claims []models.Claim
	if err := tx.Where("id IN ?", env.Supersedes).Find(&claims).Error; err != nil {
		return nil, fmt.Errorf("read superseded claims: %w", err)
	}
	slices.SortFunc(claims, func(a, b models.Claim) int {
		return slices.Index(env.Supersedes, a.ID) - slices.Index(env.Supersedes, b.ID)
	})
	return claims, nil
}

// findClaim reads the claim an attest, refute or verify acts on; it must
// belong to the act's thread.
//
// Reading: a claim of another thread is refused with parent_mismatch
// (field claim): the claim's message is the act's default parent, and it
// belongs to another thread, which is that reason's very case.
func findClaim(tx *gorm.DB, th models.Thread, id int64) (models.Claim, error) {
	var c models.Claim
	err := tx.First(&c, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return c, claimNotFound(id, "claim")
	}
	if err != nil {
		return c, fmt.Errorf("find claim: %w", err)
	}
	if c.ThreadID != th.ID {
		return c, Refuse(ParentMismatch, "claim %s belongs to thread %s, not %s; act on it there",
			ClaimKey(id), ThreadKey(c.ThreadID), ThreadKey(th.ID)).On("claim")
	}
	return c, nil
}

// planClaims checks what a profile act does to claims and plans it. A
// verify makes the claim verified only when it completes the quorum of
// distinct parties (docs/protocol.md §15.3): verifiers are the parties
// that verified the target before, quorum is verify_quorum.
func planClaims(who Caller, env Envelope, target *models.Claim, superseded []models.Claim, now time.Time, verifiers []string, quorum int) (claimWork, error) {
	work := claimWork{target: target, superseded: superseded}
	if claimAct(env.Kind) {
		if err := checkSelfAttest(*target, who, env.Kind); err != nil {
			return work, err
		}
		to, err := claimStep(*target, env.Kind, now)
		if to == Verified && !quorumReached(verifiers, who.Party(), quorum) {
			to = "" // recorded; the claim stays supported until the quorum stands
		}
		work.to = to
		return work, err
	}
	for _, c := range superseded {
		if err := checkSupersede(c, who); err != nil {
			return work, err
		}
	}
	return work, nil
}

// claimStep applies the certainty machine to the claim an act names: the
// status the act moves it to, "" when the claim keeps its status, or
// transition_invalid saying why.
func claimStep(c models.Claim, kind Kind, now time.Time) (ClaimStatus, error) {
	cur := statusAt(c, now)
	to, ok := nextStatus(cur, c.SupersededByID != nil, kind)
	switch {
	case ok:
		return to, nil
	case c.SupersededByID != nil:
		return "", Refuse(TransitionInvalid, "claim %s was superseded by %s: %s the newer claim instead",
			ClaimKey(c.ID), ClaimKey(*c.SupersededByID), kind).On("claim")
	case cur == Expired:
		return "", Refuse(TransitionInvalid, "claim %s expired at %s: it can still be refuted or superseded by a renewed claim, no longer supported or verified",
			ClaimKey(c.ID), c.ValidUntil.UTC().Format(time.RFC3339)).On("claim")
	case kind == Verify && cur == Unverified:
		return "", Refuse(TransitionInvalid, "claim %s is unverified: it needs support (an attest) before a verifier seals it", ClaimKey(c.ID)).On("claim")
	}
	return "", Refuse(TransitionInvalid, "%s is not allowed on a claim that is %s; see the dialectic profile's claim_transitions in the manifest",
		kind, cur).On("claim")
}

// nextStatus is the certainty machine of docs/protocol.md §10: from the status a
// claim reads with (and whether a newer claim superseded it), the status an
// act moves it to ("" when it keeps its status), or false when the act is
// not allowed.
//
// Reading: a claim a newer one superseded takes no act at all; the newer
// claim is the one to act on.
//
// Reading: refuting a refuted claim is accepted and adds a counter-proof;
// the status stays refuted, which is final.
//
// Reading: an expired claim is no longer attested or verified
// (transition_invalid): support past a claim's validity supports nothing.
// It may still be refuted, and superseded by a renewed claim.
func nextStatus(cur ClaimStatus, superseded bool, kind Kind) (ClaimStatus, bool) {
	switch {
	case superseded || cur == Superseded:
		return "", false
	case kind == Refute && cur == Refuted:
		return "", true
	case kind == Refute:
		return Refuted, true
	case cur == Expired:
		return "", false
	case kind == Attest && cur == Unverified:
		return Supported, true
	case kind == Attest && (cur == Supported || cur == Verified):
		return "", true
	case kind == Verify && cur == Supported:
		return Verified, true
	}
	return "", false
}

// checkSupersede: superseding is for the claimant's own identity, a lock
// holder or a human (docs/protocol.md §10), and a claim is superseded once.
//
// Reading: the superseded claim may sit in any thread, a closed or ended
// one too: superseding changes the claim, not its thread's conversation,
// and a new claim is the way forward from a refuted one.
func checkSupersede(c models.Claim, who Caller) error {
	if !who.Human() && !who.LockHolder() && c.ClaimantIdentity != who.Identity {
		return Refuse(ThreadAuthorityMissing, "only its claimant (%s), a lock holder or a human supersedes claim %s",
			c.ClaimantIdentity, ClaimKey(c.ID)).On("supersedes")
	}
	if c.SupersededByID != nil {
		return Refuse(TransitionInvalid, "claim %s was already superseded by %s; name the newer claim instead",
			ClaimKey(c.ID), ClaimKey(*c.SupersededByID)).On("supersedes")
	}
	return nil
}

// recordClaims writes what a profile act does to claims, after its
// message: an assert's new claim, its evidence and the claims it
// supersedes; an attest's, refute's or verify's evidence and the target's
// new status. Every status change is an event of type claim, each at a
// fresh log position, which moves the action's position on.
func (a *action) recordClaims(th models.Thread, env Envelope, work claimWork) error {
	tx, msg := a.tx, a.msg
	switch {
	case env.Kind == Assert:
		c := models.Claim{
			ThreadID: th.ID, MessageID: msg.ID, Statement: env.Body, Status: string(Unverified),
			ClaimantIdentity: a.who.Identity, ClaimantExtension: a.ext, ClaimantOwner: a.who.storedOwner(), ValidUntil: env.ValidUntil, CreatedAt: a.now,
		}
		if err := tx.Create(&c).Error; err != nil {
			return fmt.Errorf("insert claim: %w", err)
		}
		if c.ClaimantOwner != "" {
			if err := tx.Exec("UPDATE claims SET claimant_owner = ? WHERE id = ?", c.ClaimantOwner, c.ID).Error; err != nil {
				return fmt.Errorf("insert claim: %w", err)
			}
		}
		msg.ClaimID = &c.ID
		if err := tx.Model(msg).Update("claim_id", c.ID).Error; err != nil {
			return fmt.Errorf("link claim: %w", err)
		}
		if err := insertEvidence(tx, c.ID, msg.ID, env.Evidence); err != nil {
			return err
		}
		if err := a.claimEvent(c, "", Unverified); err != nil {
			return err
		}
		for _, old := range work.superseded {
			if err := a.supersede(old, c); err != nil {
				return err
			}
		}
	case claimAct(env.Kind):
		if err := insertEvidence(tx, work.target.ID, msg.ID, env.Evidence); err != nil {
			return err
		}
		if work.to == "" {
			return nil
		}
		err := tx.Model(&models.Claim{}).Where("id = ?", work.target.ID).Update("status", string(work.to)).Error
		if err != nil {
			return fmt.Errorf("update claim: %w", err)
		}
		return a.claimEvent(*work.target, ClaimStatus(work.target.Status), work.to)
	}
	return nil
}

// supersede makes newer the claim that replaces old. A claim of another
// thread than newer's counts as activity there too.
//
// Reading: a refuted claim stays refuted (final, docs/protocol.md §10) and only
// gains superseded_by; every other status becomes superseded.
func (a *action) supersede(old, newer models.Claim) error {
	fields := map[string]any{"superseded_by_id": newer.ID}
	if ClaimStatus(old.Status) != Refuted {
		fields["status"] = string(Superseded)
	}
	if err := a.tx.Model(&models.Claim{}).Where("id = ?", old.ID).Updates(fields).Error; err != nil {
		return fmt.Errorf("supersede claim: %w", err)
	}
	if ClaimStatus(old.Status) != Refuted {
		if err := a.claimEvent(old, ClaimStatus(old.Status), Superseded); err != nil {
			return err
		}
	}
	if old.ThreadID != newer.ThreadID {
		err := a.tx.Model(&models.Thread{}).Where("id = ?", old.ThreadID).Updates(map[string]any{"activity_seq": a.seq, "updated_at": a.now}).Error
		if err != nil {
			return fmt.Errorf("touch thread: %w", err)
		}
	}
	return nil
}

func insertEvidence(tx *gorm.DB, claimID, msgID int64, evidence []Evidence) error {
	if len(evidence) == 0 {
		return nil
	}
	rows := make([]models.Evidence, len(evidence))
	for i, e := range evidence {
		rows[i] = models.Evidence{ClaimID: claimID, MessageID: msgID, Position: i + 1, Kind: string(e.Kind), Ref: e.Ref, Note: e.Note}
	}
	if err := tx.Create(&rows).Error; err != nil {
		return fmt.Errorf("insert evidence: %w", err)
	}
	return nil
}

// claimEvent appends a claim's status change to its thread's log, at the
// action's next log position.
//
// Reading: a claim's status is no proposal; its event is confirmed as it
// is made (confirmed_at equals at).
func (a *action) claimEvent(c models.Claim, from, to ClaimStatus) error {
	seq, err := nextSeq(a.tx)
	if err != nil {
		return err
	}
	a.seq = seq
	ev := models.Event{
		Seq: seq, ThreadID: c.ThreadID, Type: string(EventTypeClaim), FromState: string(from), ToState: string(to),
		Origin: a.who.Origin(), Label: a.who.EventLabel(), ActorIdentity: a.who.Identity, ActorExtension: a.ext,
		MessageID: a.msgID(), ClaimID: &c.ID, At: a.now, ConfirmedAt: &a.now,
	}
	if err := a.tx.Create(&ev).Error; err != nil {
		return fmt.Errorf("insert claim event: %w", err)
	}
	a.noteClaimVerdict(c.ID, c.ThreadID, to)
	return nil
}
