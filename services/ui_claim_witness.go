package services

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"gorm.io/gorm"
)

// What the web UI shows of the witness profile (docs/protocol.md §15) on a
// claim: the quorum as progress, each verifier's party, blob evidence with
// its size and type, and the signature of a statement cited as evidence.

// BlobMeta is what a page shows of a stored blob cited as evidence: never
// its bytes, which are downloaded, never shown inline.
type BlobMeta struct {
	Size      int64
	MediaType string
}

// PartyOf is the party an owner field and an identity make: the owner,
// or the identity that is its own party (§15.1).
func PartyOf(owner *string, identity string) string {
	if owner != nil {
		return partyOf(*owner, identity)
	}
	return identity
}

// Quorum counts the distinct parties, none the claimant's, whose
// verifications stand on the claim, against the quorum it needs: the
// "1 of 2 independent verifiers" a page shows. have may exceed need only
// when the instance's quorum was lowered after the fact.
func (c Claim) Quorum() (have, need int) {
	claimant := PartyOf(c.Claimant.Owner, c.Claimant.Identity)
	var parties []string
	for _, v := range c.Verifications {
		if p := PartyOf(v.Owner, v.Identity); p != claimant && !slices.Contains(parties, p) {
			parties = append(parties, p)
		}
	}
	return len(parties), max(c.VerifyQuorum, 1)
}

// verifiedBy reports whether who's party has a verification on the claim.
func (c Claim) verifiedBy(who Caller) bool {
	return slices.ContainsFunc(c.Verifications, func(v Verification) bool { return PartyOf(v.Owner, v.Identity) == who.Party() })
}

// ownParty reports whether the claimant belongs to who's party: the
// party may refute it, never attest or verify it (self_attest, §15.2).
func (c Claim) ownParty(who Caller) bool {
	return c.Claimant.Identity == who.Identity || PartyOf(c.Claimant.Owner, c.Claimant.Identity) == who.Party()
}

// sortByQuorum orders claims waiting for a seal by how close each is to
// its quorum: fewest verifications missing first, then the most
// supporting parties, then the newest.
//
// Reading: "the verifier queue orders by what is closest to quorum"
// (issue 25); support breaks ties, as the claim a verifier can most
// likely confirm. The board orders the page_default newest supported
// claims so: counting parties in SQL for every claim would cost the board
// a query over all verifications.
func sortByQuorum(claims []Claim) {
	slices.SortStableFunc(claims, func(a, b Claim) int {
		ha, na := a.Quorum()
		hb, nb := b.Quorum()
		return cmp.Or(cmp.Compare(na-ha, nb-hb), cmp.Compare(b.SupportParties, a.SupportParties), cmp.Compare(b.CreatedAt.UnixNano(), a.CreatedAt.UnixNano()))
	})
}

// annotateForPeople completes claims for a page: the signatures of
// attestation evidence (as every shape), those of the verifications' own
// evidence, and the size and type of the blobs evidence names, read in one
// query.
func (f *Forum) annotateForPeople(db *gorm.DB, claims []Claim) error {
	if len(claims) == 0 {
		return nil
	}
	f.annotateClaims(db, claims)
	each := func(fn func(e *Evidence)) {
		items := func(list []Evidence) {
			for i := range list {
				fn(&list[i])
			}
		}
		for c := range claims {
			items(claims[c].Evidence)
			for _, acts := range [][]ClaimAct{claims[c].Attestations, claims[c].Refutations} {
				for i := range acts {
					items(acts[i].Evidence)
				}
			}
			for i := range claims[c].Verifications {
				items(claims[c].Verifications[i].Evidence)
			}
		}
	}
	var digests []string
	signatures := map[string]string{}
	each(func(e *Evidence) {
		if IsBlobDigest(e.Ref) && !slices.Contains(digests, e.Ref) {
			digests = append(digests, e.Ref)
		}
		if e.Signature != "" {
			signatures[e.Ref] = e.Signature
		}
	})
	// A verification's evidence is not in annotateClaims' lists: mark it
	// alike, each blob checked once.
	each(func(e *Evidence) {
		if e.Kind != "attestation" || e.Signature != "" {
			return
		}
		s, ok := signatures[e.Ref]
		if !ok {
			s = f.signatureOf(db, e.Ref)
			signatures[e.Ref] = s
		}
		e.Signature = s
	})
	if len(digests) == 0 {
		return nil
	}
	var rows []struct {
		Digest    string
		Size      int64
		MediaType string
	}
	if err := db.Raw("SELECT digest, size, media_type FROM blobs WHERE digest IN ?", digests).Scan(&rows).Error; err != nil {
		return fmt.Errorf("evidence blobs: %w", err)
	}
	metas := map[string]*BlobMeta{}
	for _, r := range rows {
		metas[r.Digest] = &BlobMeta{Size: r.Size, MediaType: r.MediaType}
	}
	each(func(e *Evidence) {
		if m, ok := metas[e.Ref]; ok {
			e.Blob = m
		}
	})
	return nil
}

// ClaimsForPeople reads a page of claims (list_claims) for the web UI's
// claims page, completed for people (annotateForPeople).
func (f *Forum) ClaimsForPeople(ctx context.Context, who Caller, q ClaimsQuery) (ClaimPage, error) {
	page, err := f.ListClaims(ctx, who, q)
	if err != nil {
		return ClaimPage{}, err
	}
	if err := f.annotateForPeople(f.db.WithContext(ctx), page.Claims); err != nil {
		return ClaimPage{}, err
	}
	return page, nil
}

// ClaimForPeople reads one claim (get_claim) for a page, completed for
// people (annotateForPeople).
func (f *Forum) ClaimForPeople(ctx context.Context, who Caller, claim string) (Claim, error) {
	v, err := f.GetClaim(ctx, who, claim)
	if err != nil {
		return Claim{}, err
	}
	one := []Claim{v.Claim}
	if err := f.annotateForPeople(f.db.WithContext(ctx), one); err != nil {
		return Claim{}, err
	}
	return one[0], nil
}
