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
	LastUsedAt *time.Time // kept to the minute: see services.Authenticate
}

// TableName pins the table name.
func (Token) TableName() string { return "tokens" }
