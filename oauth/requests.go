package oauth

import (
	"context"
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"parley/services"
)

// authRequest is a stored authorization request as zitadel/oidc sees it.
type authRequest struct{ r services.OAuthRequest }

var _ op.AuthRequest = authRequest{}

func (a authRequest) GetID() string                      { return a.r.ID }
func (a authRequest) GetACR() string                     { return "" }
func (a authRequest) GetAMR() []string                   { return nil }
func (a authRequest) GetAudience() []string              { return []string{a.r.ClientID} }
func (a authRequest) GetAuthTime() time.Time             { return a.r.CreatedAt }
func (a authRequest) GetClientID() string                { return a.r.ClientID }
func (a authRequest) GetNonce() string                   { return "" }
func (a authRequest) GetRedirectURI() string             { return a.r.RedirectURI }
func (a authRequest) GetState() string                   { return a.r.State }
func (a authRequest) GetSubject() string                 { return a.r.Identity }
func (a authRequest) Done() bool                         { return a.r.Approved }
func (a authRequest) GetResponseMode() oidc.ResponseMode { return oidc.ResponseModeQuery }
func (a authRequest) GetResponseType() oidc.ResponseType { return oidc.ResponseTypeCode }
func (a authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	return &oidc.CodeChallenge{Challenge: a.r.CodeChallenge, Method: oidc.CodeChallengeMethodS256}
}

// GetScopes are the rights the human granted, once approved, and
// offline_access: every grant gets a refresh token.
func (a authRequest) GetScopes() []string {
	return grantedScopes(a.r.Rights)
}

func (a authRequest) grant() services.OAuthGrant {
	return services.OAuthGrant{TokenID: a.r.TokenID, Identity: a.r.Identity, ClientID: a.r.ClientID, Resource: a.r.Resource,
		Scopes: grantedScopes(a.r.Rights), AuthTime: a.r.CreatedAt}
}

func grantedScopes(rights []services.Right) []string {
	out := make([]string, 0, len(rights)+1)
	for _, r := range rights {
		out = append(out, string(r))
	}
	return append(out, oidc.ScopeOfflineAccess)
}

// refreshRequest is the grant of a refresh token being used.
type refreshRequest struct {
	g      services.OAuthGrant
	scopes []string
}

var _ op.RefreshTokenRequest = (*refreshRequest)(nil)

func (r *refreshRequest) GetAMR() []string       { return nil }
func (r *refreshRequest) GetAudience() []string  { return []string{r.g.ClientID} }
func (r *refreshRequest) GetAuthTime() time.Time { return r.g.AuthTime }
func (r *refreshRequest) GetClientID() string    { return r.g.ClientID }
func (r *refreshRequest) GetScopes() []string    { return r.scopes }
func (r *refreshRequest) GetSubject() string     { return r.g.Identity }
func (r *refreshRequest) SetCurrentScopes(s []string) {
	// A narrower refresh keeps the grant: the rights are the Parley
	// token's, whatever the scopes of one access token say.
	r.scopes = slices.Clone(s)
}

// grantOf is the grant a token request stands for.
func grantOf(req op.TokenRequest) (services.OAuthGrant, bool) {
	switch r := req.(type) {
	case authRequest:
		return r.grant(), true
	case *refreshRequest:
		return r.g, true
	}
	return services.OAuthGrant{}, false
}

// memo carries, through one request, what the handlers look up more than
// once (the client, fetched perhaps from its metadata URL) and what the
// library does not parse (RFC 8707's resource).
type memo struct {
	client    *client
	resources []string
}

type memoKey struct{}

func memoOf(ctx context.Context) *memo {
	m, _ := ctx.Value(memoKey{}).(*memo)
	return m
}
