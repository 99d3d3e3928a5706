package models

import "time"

// Claim is a statement asserted under the dialectic profile (docs/protocol.md
// §10). Status is the one its acts left it in: unverified, supported,
// verified, refuted or superseded; "expired" is read from ValidUntil, never
// stored.
type Claim struct {
	ID                int64 `gorm:"primaryKey"`
	ThreadID          int64
	MessageID         int64 // the assert that made it
	Statement         string
	Status            string
	ClaimantIdentity  string
	ClaimantExtension string
	ClaimantOwner     string `gorm:"->"` // the asserting token's owner then, or "" (§15.1); read-only to GORM, written by services
	SupersededByID    *int64 // the newer claim that replaced it
	ValidUntil        *time.Time
	CreatedAt         time.Time `gorm:"autoCreateTime:false"` // set by services
}

// TableName pins the table name.
func (Claim) TableName() string { return "claims" }

// Evidence is one proof a claim act carries: a pointer, never an opinion.
// Position keeps the order in which the act listed it.
type Evidence struct {
	ID        int64 `gorm:"primaryKey"`
	ClaimID   int64
	MessageID int64
	Position  int
	Kind      string
	Ref       string
	Note      string
}

// TableName pins the table name.
func (Evidence) TableName() string { return "evidence" }
