package services

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"

	"parley/models"
)

// HumanRealm is the realm of human identities: "human:<name>".
const HumanRealm = "human"

// tokenPrefix starts every token, so a leaked one is easy to recognise.
// A token is "prl_<public id>_<secret>": the public id finds the row, the
// secret is compared, hashed, in constant time.
const tokenPrefix = "prl_"

// TokenRequest asks for a new token: for an agent (Handle, Rights) or for a
// human who already has an account (Human).
type TokenRequest struct {
	Handle string
	Human  string
	Rights []Right
	Label  string
	// Owner is the human who owns an agent's token (docs/protocol.md
	// §15.1): a human account's name; "" for a token that is its own
	// party. A human's own token is owned by that human.
	Owner string
}

// TokenInfo describes a stored token; the secret is never part of it.
type TokenInfo struct {
	ID         int64      `json:"id"`
	Identity   string     `json:"identity"`
	AuthorKind AuthorKind `json:"author_kind"`
	Label      string     `json:"label"`
	Rights     []Right    `json:"rights"`
	Owner      *string    `json:"owner" jsonschema:"nullable" jsonschema_description:"Witness profile: the human who owns the token, human:<name>; null for a token that is its own party."`
	CreatedAt  time.Time  `json:"created_at"`
	RevokedAt  *time.Time `json:"revoked_at" jsonschema:"nullable"`
	// LastUsedAt is when the token last authenticated a request, to within
	// tokenUseGranularity; nil when never.
	LastUsedAt *time.Time `json:"last_used_at" jsonschema:"nullable"`
}

// CreatedToken is a new token with its secret, shown once.
type CreatedToken struct {
	Secret string
	Token  TokenInfo
}

// Me answers whoami: who the caller is, and what it needs to know to start
// in one call — whether work waits, and whether the manifest changed.
type Me struct {
	Identity   string      `json:"identity"`
	AuthorKind AuthorKind  `json:"author_kind"`
	Rights     []Right     `json:"rights"`
	Label      string      `json:"label"`
	Badge      *string     `json:"badge" jsonschema:"nullable"`
	Owner      *string     `json:"owner" jsonschema:"nullable" jsonschema_description:"Witness profile: the human you act for, human:<name> (a human owns itself); null when your token is its own party. The identities of one owner form one party, which cannot vouch for itself."`
	Inbox      InboxCount  `json:"inbox"`
	Manifest   ManifestRef `json:"manifest"`
}

// InboxCount is how many threads await the caller's reply.
type InboxCount struct {
	Count int `json:"count" jsonschema_description:"How many threads inbox would list for you now (with the extension given to whoami)."`
}

// ManifestRef names the manifest in force without repeating it.
type ManifestRef struct {
	Parley  string `json:"parley" jsonschema_description:"The protocol version."`
	Version string `json:"version" jsonschema_description:"The server's version."`
	Digest  string `json:"digest" jsonschema_description:"sha256 of the manifest as get_manifest answers it: it changes whenever anything in it changes, limits included. Read the manifest again when it differs from the digest you saw last."`
}

// WhoamiQuery is whoami's input: the extension to count the inbox for.
type WhoamiQuery struct {
	Extension string `json:"extension,omitempty"`
}

// Whoami describes the caller, with its inbox count and the manifest's
// version and digest.
//
// Reading: §8.2 gives whoami {identity, author_kind, rights, label, badge};
// inbox and manifest are this instance's additions, so that an agent's
// first call tells it whether to call inbox and get_manifest at all.
func (f *Forum) Whoami(ctx context.Context, who Caller, q WhoamiQuery) (Me, error) {
	if err := need(who, RightRead); err != nil {
		return Me{}, err
	}
	n, err := f.inboxCount(ctx, who, q.Extension)
	if err != nil {
		return Me{}, err
	}
	return Me{Identity: who.Identity, AuthorKind: who.Kind, Rights: who.RightList(), Label: who.Label, Badge: optional(who.Badge()),
		Owner: ownerField(who.Owner), Inbox: InboxCount{Count: n}, Manifest: ManifestRef{Parley: "1", Version: Version, Digest: f.ManifestDigest()}}, nil
}

// CreateToken stores a new token and returns its secret, which is not kept.
// A human's token acts as that human, with the rights read and write.
func (f *Forum) CreateToken(ctx context.Context, req TokenRequest) (CreatedToken, error) {
	tok := models.Token{AuthorKind: string(KindLLM), Label: req.Label}
	switch {
	case req.Human != "" && req.Handle != "":
		return CreatedToken{}, Refuse(InvalidBody, "a token is for an agent handle or for a human, not both").On("handle")
	case req.Human != "":
		if err := f.db.WithContext(ctx).Where("name = ?", req.Human).First(&models.User{}).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return CreatedToken{}, Refuse(IdentityNotFound, "no human named %q: add one first", req.Human).On("human")
			}
			return CreatedToken{}, fmt.Errorf("create token: %w", err)
		}
		if req.Owner != "" {
			return CreatedToken{}, Refuse(InvalidBody, "a human's token is owned by that human: owner is for an agent's token").On("owner")
		}
		tok.Identity, tok.AuthorKind, tok.Rights = HumanRealm+":"+req.Human, string(KindHuman), "read,write"
		if tok.Label == "" {
			tok.Label = req.Human
		}
	default:
		if !validName(req.Handle, 64) {
			return CreatedToken{}, Refuse(InvalidBody, "handle must match [a-z0-9][a-z0-9._-]{0,63}").On("handle")
		}
		if len(req.Rights) == 0 {
			return CreatedToken{}, Refuse(InvalidBody, "a token needs at least one right").On("rights")
		}
		tok.Identity, tok.Rights = f.realm+":"+req.Handle, joinRights(req.Rights)
		if req.Owner != "" {
			owner, err := ownerName(f.db.WithContext(ctx), req.Owner)
			if err != nil {
				return CreatedToken{}, err
			}
			tok.Owner = owner
		}
		if tok.Label == "" {
			tok.Label = req.Handle
		}
	}
	if len([]rune(tok.Label)) > 64 || strings.ContainsRune(tok.Label, 0) {
		return CreatedToken{}, Refuse(InvalidBody, "label must be at most 64 characters").On("label")
	}
	public, secret := randomHex(8), randomHex(32)
	sum := sha256.Sum256([]byte(secret))
	tok.PublicID, tok.SecretHash, tok.CreatedAt = public, sum[:], f.timestamp()
	err := f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&tok).Error; err != nil {
			return err
		}
		if tok.Owner == "" {
			return nil // the column's default: a token before owners existed is written so too
		}
		return tx.Exec("UPDATE tokens SET owner = ? WHERE id = ?", tok.Owner, tok.ID).Error
	})
	if err != nil {
		return CreatedToken{}, fmt.Errorf("create token: %w", err)
	}
	return CreatedToken{Secret: tokenPrefix + public + "_" + secret, Token: tokenInfo(tok)}, nil
}

// splitToken reads a bearer token: its public id, to find its row by, and
// the SHA-256 of its secret, to compare with the row's hash.
func splitToken(token string) (public string, sum [sha256.Size]byte, err error) {
	if token == "" {
		return "", sum, Refuse(TokenMissing, "send Authorization: Bearer <token>")
	}
	public, secret, ok := strings.Cut(strings.TrimPrefix(token, tokenPrefix), "_")
	if !ok || !strings.HasPrefix(token, tokenPrefix) {
		return "", sum, errTokenInvalid()
	}
	return public, sha256.Sum256([]byte(secret)), nil
}

// tokenMatches compares a secret's hash with a token row's, in constant
// time, and refuses a revoked token.
func tokenMatches(sum [sha256.Size]byte, hash []byte, revoked *time.Time) bool {
	return subtle.ConstantTimeCompare(sum[:], hash) == 1 && revoked == nil
}

func errTokenInvalid() error { return Refuse(TokenInvalid, "the token is unknown or revoked") }

// Authenticate resolves a bearer token to its caller.
func (f *Forum) Authenticate(ctx context.Context, token string) (Caller, error) {
	public, sum, err := splitToken(token)
	if err != nil {
		return Caller{}, err
	}
	var tok models.Token
	err = f.db.WithContext(ctx).Where("public_id = ?", public).First(&tok).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Caller{}, errTokenInvalid()
	}
	if err != nil {
		return Caller{}, fmt.Errorf("authenticate: %w", err)
	}
	if !tokenMatches(sum, tok.SecretHash, tok.RevokedAt) {
		return Caller{}, errTokenInvalid()
	}
	if err := f.noteTokenUse(ctx, tok.ID, tok.LastUsedAt); err != nil {
		return Caller{}, err
	}
	rights, _ := ParseRights(tok.Rights)
	return Caller{Identity: tok.Identity, Kind: AuthorKind(tok.AuthorKind), Rights: rights, Label: tok.Label, TokenID: tok.ID,
		Owner: ownerOf(tok.Identity, tok.AuthorKind, tok.Owner)}, nil
}

// tokenUseGranularity is how stale a token's last_used_at may be before
// authentication writes it again: a token in steady use costs one write a
// minute, not one per request.
const tokenUseGranularity = time.Minute

// noteTokenUse records that tok authenticated a request, when its stored
// last use is older than tokenUseGranularity: one UPDATE of one row by
// primary key, guarded so that concurrent requests write it once.
func (f *Forum) noteTokenUse(ctx context.Context, id int64, lastUsed *time.Time) error {
	now := f.timestamp()
	stale := now.Add(-tokenUseGranularity)
	if lastUsed != nil && lastUsed.After(stale) {
		return nil
	}
	err := f.db.WithContext(ctx).Exec("UPDATE tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)",
		now, id, stale).Error
	if err != nil {
		return fmt.Errorf("authenticate: %w", err)
	}
	return nil
}

// ListTokens lists every token, newest first.
func (f *Forum) ListTokens(ctx context.Context) ([]TokenInfo, error) {
	var toks []models.Token
	if err := f.db.WithContext(ctx).Order("id DESC").Find(&toks).Error; err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	out := make([]TokenInfo, len(toks))
	for i, t := range toks {
		out[i] = tokenInfo(t)
	}
	return out, nil
}

// RevokeToken revokes a token by id, and with it the OAuth access and
// refresh tokens it handed out; revoking twice changes nothing.
// Reading: no reason names a missing token; a token is an identity's
// credential, so an unknown id is identity_not_found.
func (f *Forum) RevokeToken(ctx context.Context, id int64) (TokenInfo, error) {
	var tok models.Token
	err := f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.First(&tok, id).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return Refuse(IdentityNotFound, "no token with id %d", id).On("id")
			}
			return err
		}
		if tok.RevokedAt != nil {
			return nil
		}
		now := f.timestamp()
		tok.RevokedAt = &now
		if err := tx.Model(&tok).Update("revoked_at", now).Error; err != nil {
			return err
		}
		// A token granted over OAuth ends with what it handed out.
		return endOAuth(tx, tok.ID)
	})
	if err != nil {
		return TokenInfo{}, fmt.Errorf("revoke token: %w", err)
	}
	return tokenInfo(tok), nil
}

// AddUser creates a human account; the password is stored as a bcrypt hash.
func (f *Forum) AddUser(ctx context.Context, name, password string) error {
	return f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		_, err := f.addUser(tx, name, password)
		return err
	})
}

func (f *Forum) addUser(tx *gorm.DB, name, password string) (models.User, error) {
	if !validName(name, 64) {
		return models.User{}, Refuse(InvalidBody, "name must match [a-z0-9][a-z0-9._-]{0,63}").On("name")
	}
	if len(password) < 8 || len(password) > 72 {
		return models.User{}, Refuse(InvalidBody, "password must be 8 to 72 bytes long").On("password")
	}
	var n int64
	if err := tx.Model(&models.User{}).Where("name = ?", name).Count(&n).Error; err != nil {
		return models.User{}, fmt.Errorf("add user: %w", err)
	}
	if n > 0 {
		return models.User{}, Refuse(InvalidBody, "a human named %q exists", name).On("name")
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return models.User{}, fmt.Errorf("add user: %w", err)
	}
	user := models.User{Name: name, PasswordHash: string(hash), CreatedAt: f.timestamp()}
	if err := tx.Create(&user).Error; err != nil {
		return models.User{}, fmt.Errorf("add user: %w", err)
	}
	return user, nil
}

// identityExists reports whether an identity holds or held a token, or is
// a human account.
func identityExists(tx *gorm.DB, identity string) (bool, error) {
	var n int64
	if err := tx.Model(&models.Token{}).Where("identity = ?", identity).Count(&n).Error; err != nil {
		return false, fmt.Errorf("find identity: %w", err)
	}
	if name, ok := strings.CutPrefix(identity, HumanRealm+":"); ok && n == 0 {
		if err := tx.Model(&models.User{}).Where("name = ?", name).Count(&n).Error; err != nil {
			return false, fmt.Errorf("find identity: %w", err)
		}
	}
	return n > 0, nil
}

func tokenInfo(t models.Token) TokenInfo {
	rights, _ := ParseRights(t.Rights)
	return TokenInfo{ID: t.ID, Identity: t.Identity, AuthorKind: AuthorKind(t.AuthorKind), Label: t.Label,
		Rights: rights, Owner: ownerField(ownerOf(t.Identity, t.AuthorKind, t.Owner)), CreatedAt: t.CreatedAt.UTC(), RevokedAt: utc(t.RevokedAt), LastUsedAt: utc(t.LastUsedAt)}
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}
