package services

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"parley/models"
)

// The OAuth 2.1 authorization server's state (migration 0017). The
// protocol itself is zitadel/oidc's (package oauth); what it remembers is
// kept here, in the database, so that any number of stateless servers
// share it. Every secret is stored as its SHA-256.

// The lifetimes of what the authorization server hands out.
const (
	// OAuthRequestLifetime is how long a human has to consent, and a
	// client to exchange its code.
	OAuthRequestLifetime = 10 * time.Minute
	// OAuthAccessLifetime is an access token's: short, since a refresh
	// token gets the next one.
	OAuthAccessLifetime = 15 * time.Minute
	// OAuthRefreshLifetime is a refresh token's; each use replaces it.
	OAuthRefreshLifetime = 30 * 24 * time.Hour
)

// OAuthClient is a client the operator registered.
type OAuthClient struct {
	ID           string
	Name         string
	RedirectURIs []string
}

// OAuthRequest is an authorization request, from the client's redirect
// to the code's exchange.
type OAuthRequest struct {
	ID            string
	ClientID      string
	ClientName    string
	RedirectURI   string
	State         string
	Scopes        []string
	CodeChallenge string
	Resource      string
	// Set by the human's consent: the Parley token the grant became.
	TokenID   int64
	Identity  string
	Rights    []Right
	Approved  bool
	CreatedAt time.Time
	ExpiresAt time.Time
}

// OAuthGrant is what an access or refresh token stands for: a Parley
// token, for one client and one resource.
type OAuthGrant struct {
	TokenID  int64
	Identity string
	ClientID string
	Resource string
	Scopes   []string
	AuthTime time.Time // when the human consented: the Parley token's creation
}

func errOAuthGrant() error {
	return Refuse(TokenInvalid, "the code or refresh token is unknown, used, expired or revoked")
}

func oauthHash(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// OAuthCryptoKey is the key that seals access tokens and codes, the same
// for every server: the first to ask creates it.
func (f *Forum) OAuthCryptoKey(ctx context.Context) ([32]byte, error) {
	var key [32]byte
	db := f.db.WithContext(ctx)
	var row models.OAuthKey
	err := db.First(&row, 1).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		rand.Read(key[:])
		err = db.Clauses(clause.OnConflict{DoNothing: true}).Create(&models.OAuthKey{ID: 1, CryptoKey: key[:], CreatedAt: f.timestamp()}).Error
		if err == nil {
			err = db.First(&row, 1).Error
		}
	}
	if err != nil {
		return key, fmt.Errorf("oauth key: %w", err)
	}
	copy(key[:], row.CryptoKey)
	return key, nil
}

// AddOAuthClient registers a client, an operator's act (parley oauth
// client add). Its redirect URIs must be absolute; registering an id again
// replaces the client.
func (f *Forum) AddOAuthClient(ctx context.Context, c OAuthClient) error {
	if c.ID == "" || len(c.ID) > 200 || strings.ContainsAny(c.ID, " \t\r\n") {
		return Refuse(InvalidBody, "a client id is 1 to 200 characters without spaces").On("client_id")
	}
	if len(c.RedirectURIs) == 0 {
		return Refuse(InvalidBody, "a client needs at least one redirect URI").On("redirect_uri")
	}
	for _, r := range c.RedirectURIs {
		if u, err := url.Parse(r); err != nil || u.Scheme == "" || u.Fragment != "" || strings.ContainsAny(r, " \r\n") {
			return Refuse(InvalidBody, "redirect URI %q is not an absolute URI without fragment", r).On("redirect_uri")
		}
	}
	if c.Name == "" {
		c.Name = c.ID
	}
	row := models.OAuthClient{ClientID: c.ID, Name: c.Name, RedirectURIs: strings.Join(c.RedirectURIs, "\n"), CreatedAt: f.timestamp()}
	err := f.db.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "client_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"name", "redirect_uris"})}).Create(&row).Error
	if err != nil {
		return fmt.Errorf("add oauth client: %w", err)
	}
	return nil
}

// RegisteredOAuthClient finds a client the operator registered;
// identity_not_found when there is none.
func (f *Forum) RegisteredOAuthClient(ctx context.Context, id string) (OAuthClient, error) {
	var row models.OAuthClient
	err := f.db.WithContext(ctx).Where("client_id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return OAuthClient{}, Refuse(IdentityNotFound, "no client %q is registered", id).On("client_id")
	}
	if err != nil {
		return OAuthClient{}, fmt.Errorf("oauth client: %w", err)
	}
	return OAuthClient{ID: row.ClientID, Name: row.Name, RedirectURIs: strings.Split(row.RedirectURIs, "\n")}, nil
}

// CreateOAuthRequest stores an authorization request the library has
// checked; it is given an id and a lifetime. What has expired goes first:
// requests and access tokens live minutes, and a new authorization is
// rare enough to carry the sweep.
func (f *Forum) CreateOAuthRequest(ctx context.Context, r OAuthRequest) (OAuthRequest, error) {
	now := f.timestamp()
	for _, table := range []string{"oauth_requests", "oauth_access", "oauth_refresh"} {
		if err := f.db.WithContext(ctx).Exec("DELETE FROM "+table+" WHERE expires_at < ?", now).Error; err != nil {
			return OAuthRequest{}, fmt.Errorf("oauth sweep: %w", err)
		}
	}
	r.ID, r.CreatedAt, r.ExpiresAt = "ar_"+randomHex(16), now, now.Add(OAuthRequestLifetime)
	row := models.OAuthRequest{ID: r.ID, ClientID: r.ClientID, ClientName: r.ClientName, RedirectURI: r.RedirectURI, State: r.State,
		Scopes: strings.Join(r.Scopes, " "), CodeChallenge: r.CodeChallenge, Resource: r.Resource, CreatedAt: now, ExpiresAt: r.ExpiresAt}
	// Left NULL until consent and code (a nil []byte is not NULL to every driver).
	if err := f.db.WithContext(ctx).Omit("token_id", "code_hash", "approved_at").Create(&row).Error; err != nil {
		return OAuthRequest{}, fmt.Errorf("oauth request: %w", err)
	}
	return r, nil
}

func (f *Forum) oauthRequest(db *gorm.DB, where string, arg any) (OAuthRequest, error) {
	var row struct {
		models.OAuthRequest
		Identity *string
		Rights   *string
	}
	err := db.Table("oauth_requests").Select("oauth_requests.*, tokens.identity, tokens.rights").
		Joins("LEFT JOIN tokens ON tokens.id = oauth_requests.token_id").
		Where(where, arg).Where("oauth_requests.expires_at > ?", f.timestamp()).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return OAuthRequest{}, Refuse(TokenInvalid, "the authorization request is unknown, used or expired; start again from the client")
	}
	if err != nil {
		return OAuthRequest{}, fmt.Errorf("oauth request: %w", err)
	}
	r := row.OAuthRequest
	out := OAuthRequest{ID: r.ID, ClientID: r.ClientID, ClientName: r.ClientName, RedirectURI: r.RedirectURI, State: r.State,
		Scopes: strings.Fields(r.Scopes), CodeChallenge: r.CodeChallenge, Resource: r.Resource, Approved: r.ApprovedAt != nil,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}
	if r.TokenID != nil {
		out.TokenID = *r.TokenID
	}
	if row.Identity != nil {
		out.Identity = *row.Identity
	}
	if row.Rights != nil {
		out.Rights, _ = ParseRights(*row.Rights)
	}
	return out, nil
}

// OAuthRequestByID finds a live authorization request.
func (f *Forum) OAuthRequestByID(ctx context.Context, id string) (OAuthRequest, error) {
	return f.oauthRequest(f.db.WithContext(ctx), "oauth_requests.id = ?", id)
}

// SaveOAuthCode keeps the hash of the code issued for an approved request.
func (f *Forum) SaveOAuthCode(ctx context.Context, id, code string) error {
	res := f.db.WithContext(ctx).Exec("UPDATE oauth_requests SET code_hash = ? WHERE id = ? AND approved_at IS NOT NULL AND code_hash IS NULL",
		oauthHash(code), id)
	if res.Error != nil {
		return fmt.Errorf("oauth code: %w", res.Error)
	}
	if res.RowsAffected != 1 {
		return errOAuthGrant()
	}
	return nil
}

// OAuthRequestByCode takes the approved request a code was issued for.
// The code is good once: a replay finds nothing.
//
// Taking the request deletes it, in the same statement that proves the
// code was still unspent: of two exchanges of one code, racing, one wins.
func (f *Forum) OAuthRequestByCode(ctx context.Context, code string) (OAuthRequest, error) {
	db := f.db.WithContext(ctx)
	r, err := f.oauthRequest(db, "oauth_requests.code_hash = ?", oauthHash(code))
	if err != nil || !r.Approved {
		return OAuthRequest{}, errOAuthGrant()
	}
	res := db.Exec("DELETE FROM oauth_requests WHERE id = ? AND code_hash = ?", r.ID, oauthHash(code))
	if res.Error != nil {
		return OAuthRequest{}, fmt.Errorf("oauth code: %w", res.Error)
	}
	if res.RowsAffected != 1 {
		return OAuthRequest{}, errOAuthGrant()
	}
	return r, nil
}

// DeleteOAuthRequest forgets a request: its code is spent or refused.
func (f *Forum) DeleteOAuthRequest(ctx context.Context, id string) error {
	if err := f.db.WithContext(ctx).Exec("DELETE FROM oauth_requests WHERE id = ?", id).Error; err != nil {
		return fmt.Errorf("oauth request: %w", err)
	}
	return nil
}

// liveToken checks, in tx, that the Parley token a grant stands for is not
// revoked, and returns its identity and creation.
func liveToken(tx *gorm.DB, id int64) (models.Token, error) {
	var tok models.Token
	err := tx.Where("id = ? AND revoked_at IS NULL", id).Take(&tok).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return tok, errOAuthGrant()
	}
	return tok, err
}

func (f *Forum) insertOAuth(tx *gorm.DB, table string, g OAuthGrant, lifetime time.Duration) (string, time.Time, error) {
	secret := randomHex(32)
	now := f.timestamp()
	row := models.OAuthToken{Hash: oauthHash(secret), TokenID: g.TokenID, ClientID: g.ClientID, Resource: g.Resource,
		Scopes: strings.Join(g.Scopes, " "), CreatedAt: now, ExpiresAt: now.Add(lifetime)}
	return secret, row.ExpiresAt, tx.Table(table).Create(&row).Error
}

// IssueOAuthAccess hands out an access token for a grant, without a
// refresh token.
func (f *Forum) IssueOAuthAccess(ctx context.Context, g OAuthGrant) (string, time.Time, error) {
	var secret string
	var exp time.Time
	err := f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := liveToken(tx, g.TokenID); err != nil {
			return err
		}
		var err error
		secret, exp, err = f.insertOAuth(tx, "oauth_access", g, OAuthAccessLifetime)
		return err
	})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("oauth access: %w", err)
	}
	return secret, exp, nil
}

// IssueOAuthTokens hands out an access token and a refresh token for a
// grant. With current, a refresh token being used, it rotates: current is
// deleted in the same transaction, and a refresh token already used (or
// revoked) issues nothing.
func (f *Forum) IssueOAuthTokens(ctx context.Context, g OAuthGrant, current string) (access, refresh string, exp time.Time, err error) {
	err = f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := liveToken(tx, g.TokenID); err != nil {
			return err
		}
		if current != "" {
			res := tx.Exec("DELETE FROM oauth_refresh WHERE hash = ? AND token_id = ?", oauthHash(current), g.TokenID)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected != 1 {
				return errOAuthGrant()
			}
		}
		var err error
		if access, exp, err = f.insertOAuth(tx, "oauth_access", g, OAuthAccessLifetime); err != nil {
			return err
		}
		refresh, _, err = f.insertOAuth(tx, "oauth_refresh", g, OAuthRefreshLifetime)
		return err
	})
	if err != nil {
		return "", "", time.Time{}, fmt.Errorf("oauth tokens: %w", err)
	}
	return access, refresh, exp, nil
}

func (f *Forum) oauthGrant(ctx context.Context, table, secret string) (OAuthGrant, error) {
	var row struct {
		models.OAuthToken
		Identity  string
		GrantedAt time.Time
	}
	err := f.db.WithContext(ctx).Table(table+" AS o").Select("o.*, tokens.identity, tokens.created_at AS granted_at").
		Joins("JOIN tokens ON tokens.id = o.token_id").
		Where("o.hash = ? AND o.expires_at > ? AND tokens.revoked_at IS NULL", oauthHash(secret), f.timestamp()).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return OAuthGrant{}, errOAuthGrant()
	}
	if err != nil {
		return OAuthGrant{}, fmt.Errorf("oauth grant: %w", err)
	}
	return OAuthGrant{TokenID: row.TokenID, Identity: row.Identity, ClientID: row.ClientID, Resource: row.Resource,
		Scopes: strings.Fields(row.Scopes), AuthTime: row.GrantedAt}, nil
}

// OAuthRefreshGrant finds the grant of a live refresh token.
func (f *Forum) OAuthRefreshGrant(ctx context.Context, refresh string) (OAuthGrant, error) {
	return f.oauthGrant(ctx, "oauth_refresh", refresh)
}

// OAuthAccessGrant finds the grant of a live access token.
func (f *Forum) OAuthAccessGrant(ctx context.Context, access string) (OAuthGrant, error) {
	return f.oauthGrant(ctx, "oauth_access", access)
}

// RevokeOAuthSecret forgets an access or refresh token (RFC 7009): an
// unknown one is no error. Revoking a refresh token also ends the access
// tokens of its grant for that client.
func (f *Forum) RevokeOAuthSecret(ctx context.Context, secret, clientID string) error {
	h := oauthHash(secret)
	err := f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var row models.OAuthToken
		err := tx.Table("oauth_refresh").Where("hash = ? AND client_id = ?", h, clientID).Take(&row).Error
		if err == nil {
			if err := tx.Exec("DELETE FROM oauth_access WHERE token_id = ? AND client_id = ?", row.TokenID, clientID).Error; err != nil {
				return err
			}
		} else if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		if err := tx.Exec("DELETE FROM oauth_refresh WHERE hash = ? AND client_id = ?", h, clientID).Error; err != nil {
			return err
		}
		return tx.Exec("DELETE FROM oauth_access WHERE hash = ? AND client_id = ?", h, clientID).Error
	})
	if err != nil {
		return fmt.Errorf("oauth revoke: %w", err)
	}
	return nil
}

// endOAuth deletes, in tx, what a revoked Parley token handed out over
// OAuth: its access and refresh tokens, and its requests not yet
// exchanged.
func endOAuth(tx *gorm.DB, tokenID int64) error {
	for _, q := range []string{
		"DELETE FROM oauth_access WHERE token_id = ?",
		"DELETE FROM oauth_refresh WHERE token_id = ?",
		"DELETE FROM oauth_requests WHERE token_id = ?",
	} {
		if err := tx.Exec(q, tokenID).Error; err != nil {
			return err
		}
	}
	return nil
}

// AuthenticateOAuth resolves an access token, sealed for resource, to its
// caller: the Parley token it was issued for, as Authenticate would. A
// token unknown, expired, revoked or issued for another resource is
// token_invalid.
func (f *Forum) AuthenticateOAuth(ctx context.Context, access, resource string) (Caller, error) {
	g, err := f.OAuthAccessGrant(ctx, access)
	var r *Refusal
	if errors.As(err, &r) {
		return Caller{}, Refuse(TokenInvalid, "the access token is unknown, expired or revoked")
	}
	if err != nil {
		return Caller{}, err
	}
	if g.Resource != resource {
		return Caller{}, Refuse(TokenInvalid, "the access token was issued for another resource (%s)", g.Resource)
	}
	var tok models.Token
	if err := f.db.WithContext(ctx).First(&tok, g.TokenID).Error; err != nil {
		return Caller{}, fmt.Errorf("authenticate: %w", err)
	}
	if tok.RevokedAt != nil {
		return Caller{}, errTokenInvalid()
	}
	if err := f.noteTokenUse(ctx, tok.ID, tok.LastUsedAt); err != nil {
		return Caller{}, err
	}
	rights, _ := ParseRights(tok.Rights)
	return Caller{Identity: tok.Identity, Kind: AuthorKind(tok.AuthorKind), Rights: rights, Label: tok.Label, TokenID: tok.ID,
		Owner: ownerOf(tok.Identity, tok.AuthorKind, tok.Owner)}, nil
}
