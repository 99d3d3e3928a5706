package models

import "time"

// OAuthKey is the key that seals OAuth access tokens and codes (one row,
// id 1, migration 0017).
type OAuthKey struct {
	ID        int64 `gorm:"primaryKey;autoIncrement:false"`
	CryptoKey []byte
	CreatedAt time.Time `gorm:"autoCreateTime:false"`
}

// TableName pins the table name.
func (OAuthKey) TableName() string { return "oauth_keys" }

// OAuthClient is a client the operator registered; RedirectURIs are
// newline-separated.
type OAuthClient struct {
	ClientID     string `gorm:"primaryKey"`
	Name         string
	RedirectURIs string
	CreatedAt    time.Time `gorm:"autoCreateTime:false"`
}

// TableName pins the table name.
func (OAuthClient) TableName() string { return "oauth_clients" }

// OAuthRequest is an authorization request until its code is exchanged.
// TokenID and Rights are set by a human's consent; CodeHash once the code
// is issued.
type OAuthRequest struct {
	ID            string `gorm:"primaryKey"`
	ClientID      string
	ClientName    string
	RedirectURI   string
	State         string
	Scopes        string // space-separated, as requested
	CodeChallenge string // S256 only
	Resource      string
	TokenID       *int64
	CodeHash      []byte
	ApprovedAt    *time.Time
	CreatedAt     time.Time `gorm:"autoCreateTime:false"`
	ExpiresAt     time.Time
}

// TableName pins the table name.
func (OAuthRequest) TableName() string { return "oauth_requests" }

// OAuthToken is an access token (table oauth_access) or a refresh token
// (oauth_refresh), stored as the SHA-256 of its secret.
type OAuthToken struct {
	Hash      []byte `gorm:"primaryKey"`
	TokenID   int64
	ClientID  string
	Resource  string
	Scopes    string
	CreatedAt time.Time `gorm:"autoCreateTime:false"`
	ExpiresAt time.Time
}
