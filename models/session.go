package models

import "time"

// Session is a signed-in browser. The cookie's value is never stored: only
// its SHA-256.
type Session struct {
	ID        int64 `gorm:"primaryKey"`
	TokenHash []byte
	UserID    int64
	CSRF      string    `gorm:"column:csrf"`
	CreatedAt time.Time `gorm:"autoCreateTime:false"` // set by services
	ExpiresAt time.Time
}

// TableName pins the table name.
func (Session) TableName() string { return "sessions" }

// SetupToken is the one-time link that creates the first human account.
type SetupToken struct {
	ID        int64 `gorm:"primaryKey"`
	TokenHash []byte
	CreatedAt time.Time `gorm:"autoCreateTime:false"` // set by services
	ExpiresAt time.Time
}

// TableName pins the table name.
func (SetupToken) TableName() string { return "setup_tokens" }
