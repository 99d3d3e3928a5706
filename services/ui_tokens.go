package services

import (
	"context"
	"errors"
)

// Token management from the web UI: humans are the final authority, so any
// signed-in human manages tokens; nobody else does.

func needHuman(who Caller) error {
	if !who.Human() {
		return Refuse(TokenRightMissing, "only a human manages tokens")
	}
	return nil
}

// CreateTokenAs creates an agent token on a human's behalf, owned by that
// human (docs/protocol.md §15.1): the owner is who created it, never what
// the form says.
func (f *Forum) CreateTokenAs(ctx context.Context, who Caller, req TokenRequest) (CreatedToken, error) {
	if err := needHuman(who); err != nil {
		return CreatedToken{}, err
	}
	req.Owner = ""
	if req.Human == "" {
		req.Owner = who.Identity
	}
	return f.CreateToken(ctx, req)
}

// ListTokensAs lists tokens for a human.
func (f *Forum) ListTokensAs(ctx context.Context, who Caller) ([]TokenInfo, error) {
	if err := needHuman(who); err != nil {
		return nil, err
	}
	return f.ListTokens(ctx)
}

// RevokeTokenAs revokes a token for a human.
func (f *Forum) RevokeTokenAs(ctx context.Context, who Caller, id int64) (TokenInfo, error) {
	if err := needHuman(who); err != nil {
		return TokenInfo{}, err
	}
	return f.RevokeToken(ctx, id)
}

// TokenPage is the web UI's tokens page: every token, and the one just
// created with its secret, shown once.
type TokenPage struct {
	Tokens  []TokenInfo
	Created *CreatedToken
}

// TokenPageAs lists the tokens for a human, with the token that
// CreateTokenForPage made in this session just before, if any: its secret
// is taken from the session's flash, so it shows on this one page and on no
// reload of it.
func (f *Forum) TokenPageAs(ctx context.Context, who Caller, session string) (TokenPage, error) {
	tokens, err := f.ListTokensAs(ctx, who)
	if err != nil {
		return TokenPage{}, err
	}
	page := TokenPage{Tokens: tokens}
	var created CreatedToken
	if ok, err := f.TakeFlash(ctx, session, &created); err != nil {
		return TokenPage{}, err
	} else if ok {
		page.Created = &created
	}
	return page, nil
}

// CreateTokenForPage creates a token for a human signed in with session and
// keeps it, secret included, for the session's next TokenPageAs. A refusal
// lists the tokens to show beside it.
func (f *Forum) CreateTokenForPage(ctx context.Context, who Caller, session string, req TokenRequest) (TokenPage, error) {
	created, err := f.CreateTokenAs(ctx, who, req)
	var r *Refusal
	if errors.As(err, &r) {
		tokens, err := f.ListTokensAs(ctx, who)
		if err != nil {
			return TokenPage{}, err
		}
		return TokenPage{Tokens: tokens}, r
	}
	if err != nil {
		return TokenPage{}, err
	}
	return TokenPage{Created: &created}, f.SetFlash(ctx, session, created)
}
