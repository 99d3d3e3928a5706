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
	Rights     string    // comma-separated, e.g. "read,write,lock"
	CreatedAt  time.Time `gorm:"autoCreateTime:false"` // set by services
	RevokedAt  *time.Time
	// LastUsedAt is written only by services.Authenticate, at most once a
	// minute; read-only to GORM, so inserts work on a schema before 0011.
	LastUsedAt *time.Time `gorm:"->"`
}

// TableName pins the table name.
func (Token) TableName() string { return "tokens" }
