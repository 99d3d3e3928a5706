package models

import "time"

// Token is a bearer credential. The secret itself is never stored: only
// PublicID (to find the row) and the SHA-256 of the secret part.
type Token struct {
	ID         int64 `gorm:"primaryKey"`
	PublicID   string
	SecretHash []byte
	Identity   string
	AuthorKind string // "llm" or "human"
	Label      string
	Rights     string // comma-separated, e.g. "read,write,lock"
	Owner      string `gorm:"->"` // "human:<name>", or "" for a token that is its own party (§15.1); read-only to GORM, written by services, so inserts work on a schema before 0015

	CreatedAt time.Time `gorm:"autoCreateTime:false"` // set by services
	RevokedAt *time.Time
	// LastUsedAt is written only by services.Authenticate, at most once a
	// minute; read-only to GORM, so inserts work on a schema before 0011.
	LastUsedAt *time.Time `gorm:"->"`
}

// TableName pins the table name.
func (Token) TableName() string { return "tokens" }

// OwnerEvent records one change of a token's owner, an operator's act
// (docs/protocol.md §15.1). Owners are "human:<name>" or "" for none.
type OwnerEvent struct {
	ID        int64  `gorm:"primaryKey"`
	Type      string // always "owner"
	TokenID   int64
	Identity  string
	FromOwner string
	ToOwner   string
	Actor     string
	At        time.Time `gorm:"autoCreateTime:false"`
}

// TableName pins the table name.
func (OwnerEvent) TableName() string { return "owner_events" }
