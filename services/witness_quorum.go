package services

import (
	"fmt"
	"slices"

	"gorm.io/gorm"

	"parley/models"
)

// Independence and quorum (docs/protocol.md §15.2–3, profile witness): a
// party never vouches for itself, and a claim becomes verified only once
// verify_quorum verifications from distinct parties, none the claimant's,
// stand. Every verify is recorded; until the quorum is reached the claim
// stays supported. A claim only changes under its thread's lock, so the
// parties counted and the status written cannot race.

// quorum is verify_quorum as the rules apply it: at least 1, the
// dialectic profile's behaviour alone.
func (f *Forum) quorum() int { return max(f.limits.VerifyQuorum, 1) }

// verifierParties reads the distinct parties of a claim's verifications
// so far (as they were when each was posted), the claimant's excluded.
func verifierParties(tx *gorm.DB, c models.Claim) ([]string, error) {
	var rows []models.Message
	if err := tx.Select("author_identity", "author_owner").Where("claim_id = ? AND kind = ?", c.ID, string(Verify)).
		Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read verifications: %w", err)
	}
	var out []string
	for _, m := range rows {
		if p := messageParty(m); p != claimantParty(c) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// quorumReached reports whether a verify by party, with the parties that
// verified before, makes quorum distinct parties.
//
// Reading: a second verify from a party that verified already is
// recorded, as every verify is, and counts once: "from distinct parties".
func quorumReached(before []string, party string, quorum int) bool {
	n := len(before)
	if !slices.Contains(before, party) {
		n++
	}
	return n >= quorum
}

// checkSelfAttest forbids self-support (docs/protocol.md §10, §15.2): no
// identity attests or verifies a claim whose claimant belongs to its party
// — its own claim, from any extension, or one of an identity of the same
// owner, or, for the owner, one of its own agents' — though it may refute
// it.
//
// Reading: humans too. A human is exempt from self_reply's loop
// protection, but §10 forbids self-support to every identity. The
// claimant's party is the one it belonged to when it asserted the claim.
func checkSelfAttest(c models.Claim, who Caller, kind Kind) error {
	switch {
	case kind == Refute:
		return nil
	case c.ClaimantIdentity == who.Identity:
		return Refuse(SelfAttest, "%s is your own claim (%s asserted it); another identity must %s it, though you may refute it",
			ClaimKey(c.ID), c.ClaimantIdentity, kind).On("claim")
	case claimantParty(c) == who.Party():
		return Refuse(SelfAttest, "%s was asserted by %s, of your own party (owner %s): another party must %s it, though you may refute it",
			ClaimKey(c.ID), c.ClaimantIdentity, who.Party(), kind).On("claim")
	}
	return nil
}
