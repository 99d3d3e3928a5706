package services

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"gorm.io/gorm"

	"parley/models"
)

// What the web UI shows of claims, beyond the protocol's get_claim and
// list_claims: a thread's claims beside its tree, the acts a person may
// still take on a claim, and the board verifiers work from.

// Offers lists the acts who may still take on a claim as it reads, in the
// order attest, refute, verify: the web UI offers these and no others, so
// it never shows a button the services would refuse for the claim's
// status, for self-support (per party, §15.2) or for the verify right.
// (The thread's own state is the page's to show.)
//
// Reading: a party that verified the claim already is not offered verify
// again: the services record a second one, but it counts once (§15.3).
func (c Claim) Offers(who Caller) []Kind {
	var out []Kind
	for _, kind := range []Kind{Attest, Refute, Verify} {
		if _, ok := nextStatus(c.Status, c.SupersededBy != nil, kind); !ok {
			continue
		}
		if kind != Refute && c.ownParty(who) {
			continue // self_attest
		}
		if checkVerifier(who, kind) != nil || (kind == Verify && c.verifiedBy(who)) {
			continue
		}
		out = append(out, kind)
	}
	return out
}

// Reached is the highest step of the ladder unverified < supported <
// verified that a claim's acts reached, whatever it reads now: a refuted
// claim may have been verified first.
func (c Claim) Reached() ClaimStatus {
	switch {
	case c.VerifiedBy != nil:
		return Verified
	case len(c.Attestations) > 0:
		return Supported
	}
	return Unverified
}

// claimsOfThread reads every claim of a thread, keyed by id, for its page.
func (f *Forum) claimsOfThread(ctx context.Context, thread string) (map[string]Claim, error) {
	id, err := threadRef(thread)
	if err != nil {
		return nil, err
	}
	var rows []models.Claim
	db := f.db.WithContext(ctx)
	if err := db.Where("thread_id = ?", id).Order("id").Limit(f.limits.ThreadMaxMessages).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("thread claims: %w", err)
	}
	shapes, err := f.claimShapes(db, rows, f.timestamp())
	if err == nil {
		err = f.annotateForPeople(db, shapes)
	}
	if err != nil {
		return nil, fmt.Errorf("thread claims: %w", err)
	}
	out := make(map[string]Claim, len(shapes))
	for _, c := range shapes {
		out[c.ID] = c
	}
	return out, nil
}

// ClaimBoard is the verifiers' page: supported claims waiting for a seal,
// the newest refutations, and claims about to expire.
type ClaimBoard struct {
	Sealable    []Claim      // supported now, closest to its quorum first (sortByQuorum)
	Refutations []Refutation // newest first
	Expiring    []Claim      // on the ladder, expiring within ExpiringWithin, soonest first
	Version     string       // changes whenever any of it changes
}

// Refutation is one refute act with the claim it refuted.
type Refutation struct {
	Act   ClaimAct
	Claim Claim
}

// ExpiringWithin is how far ahead the board looks for claims about to
// expire.
const ExpiringWithin = 7 * 24 * time.Hour

// ClaimBoard reads the verifiers' board, page_default items per section.
func (f *Forum) ClaimBoard(ctx context.Context, who Caller) (ClaimBoard, error) {
	if v, err, ok := onStandby(f, who, func(r *Forum) (ClaimBoard, error) { return r.ClaimBoard(ctx, who) }); ok {
		return v, err
	}
	if err := need(who, RightRead); err != nil {
		return ClaimBoard{}, err
	}
	db, now, n := f.db.WithContext(ctx), f.timestamp(), f.limits.PageDefault
	var sealable, expiring []models.Claim
	if err := whereStatus(db.Model(&models.Claim{}), Supported, now).Order("id DESC").Limit(n).Find(&sealable).Error; err != nil {
		return ClaimBoard{}, fmt.Errorf("claim board: %w", err)
	}
	if err := db.Where("status IN ? AND valid_until > ? AND valid_until <= ?", statusStrings(graded), now, now.Add(ExpiringWithin)).
		Order("valid_until, id").Limit(n).Find(&expiring).Error; err != nil {
		return ClaimBoard{}, fmt.Errorf("claim board: %w", err)
	}
	var refutes []models.Message
	if err := db.Where("kind = ?", string(Refute)).Order("id DESC").Limit(n).Find(&refutes).Error; err != nil {
		return ClaimBoard{}, fmt.Errorf("claim board: %w", err)
	}
	board := ClaimBoard{}
	var err error
	if board.Sealable, err = f.claimShapes(db, sealable, now); err != nil {
		return ClaimBoard{}, fmt.Errorf("claim board: %w", err)
	}
	if board.Expiring, err = f.claimShapes(db, expiring, now); err != nil {
		return ClaimBoard{}, fmt.Errorf("claim board: %w", err)
	}
	if board.Refutations, err = f.refutations(db, refutes, now); err != nil {
		return ClaimBoard{}, fmt.Errorf("claim board: %w", err)
	}
	sortByQuorum(board.Sealable)
	for _, list := range [][]Claim{board.Sealable, board.Expiring} {
		if err := f.annotateForPeople(db, list); err != nil {
			return ClaimBoard{}, fmt.Errorf("claim board: %w", err)
		}
	}
	if board.Version, err = boardVersion(db, now); err != nil {
		return ClaimBoard{}, fmt.Errorf("claim board: %w", err)
	}
	return board, nil
}

// refutations pairs refute acts with their claims, read once each.
func (f *Forum) refutations(db *gorm.DB, refutes []models.Message, now time.Time) ([]Refutation, error) {
	var ids []int64
	for _, m := range refutes {
		if !slices.Contains(ids, *m.ClaimID) {
			ids = append(ids, *m.ClaimID)
		}
	}
	var rows []models.Claim
	if len(ids) > 0 {
		if err := db.Where("id IN ?", ids).Find(&rows).Error; err != nil {
			return nil, err
		}
	}
	shapes, err := f.claimShapes(db, rows, now)
	if err != nil {
		return nil, err
	}
	out := []Refutation{}
	for _, m := range refutes {
		i := slices.IndexFunc(shapes, func(c Claim) bool { return c.ID == ClaimKey(*m.ClaimID) })
		j := slices.IndexFunc(shapes[i].Refutations, func(a ClaimAct) bool { return a.Message == MessageKey(m.ID) })
		out = append(out, Refutation{Act: shapes[i].Refutations[j], Claim: shapes[i]})
	}
	return out, nil
}

// boardVersion is the log position of the last write and the minute:
// every claim act takes a log position, and expiry moves with time.
func boardVersion(db *gorm.DB, now time.Time) (string, error) {
	pos, err := lastPosition(db)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(pos, 10) + "." + now.Format("200601021504"), nil
}
