package services

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/invopop/jsonschema"
	"gorm.io/gorm"

	"parley/models"
)

// ClaimStatus is a claim's place on the certainty ladder of the dialectic
// profile (docs/protocol.md §10): unverified < supported < verified, or one of
// the outcomes refuted and superseded, or expired past its valid_until.
type ClaimStatus string

// The claim statuses. Expired is never stored: a claim reads so past its
// valid_until.
const (
	Unverified ClaimStatus = "unverified"
	Supported  ClaimStatus = "supported"
	Verified   ClaimStatus = "verified"
	Refuted    ClaimStatus = "refuted"
	Superseded ClaimStatus = "superseded"
	Expired    ClaimStatus = "expired"
)

// StatusInfo describes a claim status for the manifest.
type StatusInfo struct {
	Status      ClaimStatus `json:"status"`
	Description string      `json:"description"`
}

// ClaimStatuses lists every status a claim reads with, in ladder order.
var ClaimStatuses = []StatusInfo{
	{Unverified, "Asserted; nobody has supported it yet."},
	{Supported, "At least one identity other than the claimant attested it with evidence."},
	{Verified, "Sealed by a verifier (right verify, or a human) with evidence. It can still be refuted."},
	{Refuted, "Refuted with a counter-proof. Final: the way forward is a new claim that supersedes it."},
	{Superseded, "A newer claim named it in supersedes; read superseded_by. Final."},
	{Expired, "Past its valid_until while unverified, supported or verified. Never stored: a claim reads so once the time has passed."},
}

// graded are the statuses of the ladder itself; only they expire.
var graded = []ClaimStatus{Unverified, Supported, Verified}

// JSONSchema lists the claim statuses.
func (ClaimStatus) JSONSchema() *jsonschema.Schema {
	return enum(ClaimStatuses, func(s StatusInfo) string { return string(s.Status) })
}

func validClaimStatus(s ClaimStatus) bool {
	return slices.ContainsFunc(ClaimStatuses, func(i StatusInfo) bool { return i.Status == s })
}

// statusAt is the status a claim reads with at a time.
//
// Reading: expiry masks only the ladder (unverified, supported, verified).
// refuted and superseded are outcomes; a claim keeps them past its
// valid_until.
func statusAt(c models.Claim, now time.Time) ClaimStatus {
	s := ClaimStatus(c.Status)
	if slices.Contains(graded, s) && c.ValidUntil != nil && !now.Before(*c.ValidUntil) {
		return Expired
	}
	return s
}

// Claim is a claim as every operation shows it (docs/protocol.md §10).
type Claim struct {
	ID           string      `json:"id"`
	Message      string      `json:"message"`
	Thread       string      `json:"thread"`
	Statement    string      `json:"statement"`
	Status       ClaimStatus `json:"status"`
	Claimant     OwnedAuthor `json:"claimant"`
	Evidence     []Evidence  `json:"evidence"`
	Attestations []ClaimAct  `json:"attestations"`
	Refutations  []ClaimAct  `json:"refutations"`
	VerifiedBy   *ClaimAct   `json:"verified_by" jsonschema:"nullable" jsonschema_description:"The verification that completed the quorum and made the claim verified; null until one did."`
	Supersedes   []string    `json:"supersedes"`
	SupersededBy *string     `json:"superseded_by" jsonschema:"nullable"`
	ValidUntil   *time.Time  `json:"valid_until" jsonschema:"nullable"`
	CreatedAt    time.Time   `json:"created_at"`

	// The witness profile (docs/protocol.md §15.3).
	Verifications  []Verification `json:"verifications" jsonschema_description:"Witness profile: every verify of the claim, oldest first, with the party (owner) it came from."`
	VerifyQuorum   int            `json:"verify_quorum" jsonschema_description:"Witness profile: how many verifications from distinct parties, none the claimant's, make the claim verified (this instance's policy)."`
	SupportParties int            `json:"support_parties" jsonschema_description:"Witness profile: how many distinct parties attested the claim; attestations of one owner's identities count once."`
}

// Verification is one verify of a claim (docs/protocol.md §15.3): who,
// for whom, on what evidence, when.
type Verification struct {
	Message   string     `json:"message"`
	Identity  string     `json:"identity"`
	Extension *string    `json:"extension" jsonschema:"nullable"`
	Owner     *string    `json:"owner" jsonschema:"nullable" jsonschema_description:"The human the verifier acted for, human:<name>; null for a token that is its own party."`
	Evidence  []Evidence `json:"evidence"`
	At        time.Time  `json:"at"`
}

// ClaimAct is one attestation, refutation or seal of a claim: who, when,
// with which message and evidence.
//
// Reading: §10 names attestations, refutations and verified_by without
// their shape; each is the act that made it, so that a reader sees the
// evidence and the words beside it.
type ClaimAct struct {
	Message    string      `json:"message"`
	By         OwnedAuthor `json:"by"`
	AuthorKind AuthorKind  `json:"author_kind"`
	Body       string      `json:"body"`
	Evidence   []Evidence  `json:"evidence"`
	At         time.Time   `json:"at"`
}

// ClaimView answers get_claim.
type ClaimView struct {
	Claim Claim `json:"claim"`
}

// ClaimPage answers list_claims.
type ClaimPage struct {
	Claims []Claim `json:"claims"`
	Cursor *string `json:"cursor" jsonschema:"nullable"`
}

// ClaimsQuery is list_claims' input, as strings straight from the binding.
type ClaimsQuery struct {
	Thread string `json:"thread,omitempty"`
	Status string `json:"status,omitempty"`
	Cursor string `json:"cursor,omitempty"`
	Limit  string `json:"limit,omitempty"`
}

// GetClaim reads one claim with its evidence, attestations, refutations
// and seal.
func (f *Forum) GetClaim(ctx context.Context, who Caller, claim string) (ClaimView, error) {
	if v, err, ok := onStandby(f, who, func(r *Forum) (ClaimView, error) { return r.GetClaim(ctx, who, claim) }); ok {
		return v, err
	}
	if err := need(who, RightRead); err != nil {
		return ClaimView{}, err
	}
	id, err := claimRef(claim, "claim")
	if err != nil {
		return ClaimView{}, err
	}
	c, err := f.claimShape(f.db.WithContext(ctx), id, f.timestamp())
	if err != nil {
		return ClaimView{}, fmt.Errorf("get claim: %w", err)
	}
	one := []Claim{c}
	f.annotateClaims(f.db.WithContext(ctx), one)
	return ClaimView{Claim: one[0]}, nil
}

// ListClaims pages through claims, most recently asserted first, of one
// thread or all, optionally in one status as claims read now (expired
// included).
//
// Reading: "most recent first" orders by assertion, as claim ids do; a
// claim's later acts do not move it.
func (f *Forum) ListClaims(ctx context.Context, who Caller, q ClaimsQuery) (ClaimPage, error) {
	if v, err, ok := onStandby(f, who, func(r *Forum) (ClaimPage, error) { return r.ListClaims(ctx, who, q) }); ok {
		return v, err
	}
	if err := need(who, RightRead); err != nil {
		return ClaimPage{}, err
	}
	limit, err := f.pageSize(q.Limit)
	if err != nil {
		return ClaimPage{}, err
	}
	before, err := decodeCursor(q.Cursor, "cursor")
	if err != nil {
		return ClaimPage{}, err
	}
	db := f.db.WithContext(ctx)
	now := f.timestamp()
	query := db.Model(&models.Claim{})
	if q.Thread != "" {
		id, err := threadRef(q.Thread)
		if err != nil {
			return ClaimPage{}, err
		}
		if err := threadExists(db, id); err != nil {
			return ClaimPage{}, err
		}
		query = query.Where("thread_id = ?", id)
	}
	if q.Status != "" {
		if !validClaimStatus(ClaimStatus(q.Status)) {
			return ClaimPage{}, Refuse(InvalidBody, "status must be one of %s", claimStatusList()).On("status")
		}
		query = whereStatus(query, ClaimStatus(q.Status), now)
	}
	if before > 0 {
		query = query.Where("id < ?", before)
	}
	var rows []models.Claim
	if err := query.Order("id DESC").Limit(limit + 1).Find(&rows).Error; err != nil {
		return ClaimPage{}, fmt.Errorf("list claims: %w", err)
	}
	page := ClaimPage{Claims: []Claim{}}
	if len(rows) > limit {
		rows = rows[:limit]
		page.Cursor = optional(encodeCursor(rows[limit-1].ID))
	}
	if page.Claims, err = f.claimShapes(db, rows, now); err != nil {
		return ClaimPage{}, fmt.Errorf("list claims: %w", err)
	}
	if page.Claims != nil {
		f.annotateClaims(db, page.Claims)
	}
	return page, nil
}

// whereStatus filters claims by the status they read with now.
func whereStatus(q *gorm.DB, s ClaimStatus, now time.Time) *gorm.DB {
	switch {
	case s == Expired:
		return q.Where("status IN ? AND valid_until <= ?", statusStrings(graded), now)
	case slices.Contains(graded, s):
		return q.Where("status = ? AND (valid_until IS NULL OR valid_until > ?)", string(s), now)
	}
	return q.Where("status = ?", string(s))
}

func threadExists(db *gorm.DB, id int64) error {
	var n int64
	if err := db.Model(&models.Thread{}).Where("id = ?", id).Count(&n).Error; err != nil {
		return fmt.Errorf("find thread: %w", err)
	}
	if n == 0 {
		return threadNotFound(id)
	}
	return nil
}

// claimShape reads one claim as the wire shows it, or claim_not_found.
func (f *Forum) claimShape(db *gorm.DB, id int64, now time.Time) (Claim, error) {
	var row models.Claim
	err := db.First(&row, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Claim{}, claimNotFound(id, "claim")
	}
	if err != nil {
		return Claim{}, err
	}
	shapes, err := f.claimShapes(db, []models.Claim{row}, now)
	if err != nil {
		return Claim{}, err
	}
	return shapes[0], nil
}

// claimShapes builds the wire shape of claims in four queries: their acts,
// their evidence, the claims that supersede others among them, and the
// events that made them verified.
func (f *Forum) claimShapes(db *gorm.DB, rows []models.Claim, now time.Time) ([]Claim, error) {
	out := make([]Claim, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	var acts []models.Message
	if err := db.Where("claim_id IN ? AND kind IN ?", ids, []string{string(Attest), string(Refute), string(Verify)}).
		Order("claim_id, id").Find(&acts).Error; err != nil {
		return nil, fmt.Errorf("claim acts: %w", err)
	}
	var proofs []models.Evidence
	if err := db.Where("claim_id IN ?", ids).Order("claim_id, message_id, position").Find(&proofs).Error; err != nil {
		return nil, fmt.Errorf("claim evidence: %w", err)
	}
	var newer []models.Claim
	if err := db.Select("id", "superseded_by_id").Where("superseded_by_id IN ?", ids).Order("id").Find(&newer).Error; err != nil {
		return nil, fmt.Errorf("superseded claims: %w", err)
	}
	var sealed []models.Event
	if err := db.Select("claim_id", "message_id").Where("claim_id IN ? AND type = ? AND to_state = ?", ids, string(EventTypeClaim), string(Verified)).
		Order("id").Find(&sealed).Error; err != nil {
		return nil, fmt.Errorf("claim seals: %w", err)
	}
	sealedBy := map[int64]bool{}
	for _, e := range sealed {
		if e.MessageID != nil {
			sealedBy[*e.MessageID] = true
		}
	}
	byMessage := map[int64][]Evidence{}
	for _, p := range proofs {
		byMessage[p.MessageID] = append(byMessage[p.MessageID], Evidence{Kind: EvidenceKind(p.Kind), Ref: p.Ref, Note: p.Note})
	}
	index := make(map[int64]int, len(rows))
	for i, r := range rows {
		index[r.ID] = i
		out[i] = Claim{
			ID: ClaimKey(r.ID), Message: MessageKey(r.MessageID), Thread: ThreadKey(r.ThreadID),
			Statement: r.Statement, Status: statusAt(r, now),
			Claimant: OwnedAuthor{Author: Author{Identity: r.ClaimantIdentity, Extension: optional(r.ClaimantExtension)},
				Owner: ownerField(claimantOwner(r))},
			Evidence:     orEmpty(byMessage[r.MessageID]),
			Attestations: []ClaimAct{}, Refutations: []ClaimAct{}, Supersedes: []string{},
			ValidUntil: utc(r.ValidUntil), CreatedAt: r.CreatedAt.UTC(),
			Verifications: []Verification{}, VerifyQuorum: f.quorum(),
		}
		if r.SupersededByID != nil {
			out[i].SupersededBy = optional(ClaimKey(*r.SupersededByID))
		}
	}
	supporters := map[int64]map[string]bool{}
	for _, m := range acts {
		c := &out[index[*m.ClaimID]]
		owner := shownOwner(m.AuthorOwner, m.AuthorIdentity, m.AuthorKind)
		act := ClaimAct{
			Message: MessageKey(m.ID), AuthorKind: AuthorKind(m.AuthorKind), Body: m.Body,
			By: OwnedAuthor{Author: Author{Identity: m.AuthorIdentity, Extension: optional(m.AuthorExtension), Badge: m.AuthorBadge},
				Owner: owner},
			Evidence: orEmpty(byMessage[m.ID]), At: m.CreatedAt.UTC(),
		}
		switch Kind(m.Kind) {
		case Attest:
			c.Attestations = append(c.Attestations, act)
			if supporters[*m.ClaimID] == nil {
				supporters[*m.ClaimID] = map[string]bool{}
			}
			supporters[*m.ClaimID][messageParty(m)] = true
			c.SupportParties = len(supporters[*m.ClaimID])
		case Refute:
			c.Refutations = append(c.Refutations, act)
		case Verify:
			c.Verifications = append(c.Verifications, Verification{Message: act.Message, Identity: m.AuthorIdentity,
				Extension: optional(m.AuthorExtension), Owner: owner, Evidence: act.Evidence, At: act.At})
			if sealedBy[m.ID] {
				c.VerifiedBy = &act
			}
		}
	}
	for _, n := range newer {
		c := &out[index[*n.SupersededByID]]
		c.Supersedes = append(c.Supersedes, ClaimKey(n.ID))
	}
	return out, nil
}

func orEmpty(ev []Evidence) []Evidence {
	if ev == nil {
		return []Evidence{}
	}
	return ev
}

func statusStrings(ss []ClaimStatus) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

func claimStatusList() string {
	names := make([]string, len(ClaimStatuses))
	for i, s := range ClaimStatuses {
		names[i] = string(s.Status)
	}
	return strings.Join(names, ", ")
}
