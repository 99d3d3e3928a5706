package oauth

import (
	"context"
	"errors"
	"slices"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"parley/services"
)

// storage is zitadel/oidc's op.Storage over services: every call one
// method of services.Forum, so that all state is in the database.
//
// openid is not a scope Parley serves, but the library signs an ID token
// at every code exchange all the same: with the derived key of keys.go.
type storage struct{ s *Server }

var _ op.Storage = storage{}

func (st storage) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	name := req.ClientID
	if m := memoOf(ctx); m != nil && m.client != nil {
		name = m.client.name
	}
	r, err := st.s.forum.CreateOAuthRequest(ctx, services.OAuthRequest{ClientID: req.ClientID, ClientName: name, RedirectURI: req.RedirectURI,
		State: req.State, Scopes: req.Scopes, CodeChallenge: req.CodeChallenge, Resource: st.s.resource})
	if err != nil {
		return nil, err
	}
	return authRequest{r}, nil
}

func (st storage) AuthRequestByID(ctx context.Context, id string) (op.AuthRequest, error) {
	r, err := st.s.forum.OAuthRequestByID(ctx, id)
	if err != nil {
		return nil, err
	}
	return authRequest{r}, nil
}

// AuthRequestByCode takes the request (a code is good once) and checks
// the token request's resource against the one the code was issued for.
func (st storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	r, err := st.s.forum.OAuthRequestByCode(ctx, code)
	if err != nil {
		return nil, err
	}
	if err := st.s.checkResource(ctx, r.Resource); err != nil {
		return nil, err
	}
	return authRequest{r}, nil
}

func (st storage) SaveAuthCode(ctx context.Context, id, code string) error {
	return st.s.forum.SaveOAuthCode(ctx, id, code)
}

func (st storage) DeleteAuthRequest(ctx context.Context, id string) error {
	return st.s.forum.DeleteOAuthRequest(ctx, id)
}

func (st storage) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	g, ok := grantOf(req)
	if !ok {
		return "", time.Time{}, oidc.ErrUnsupportedGrantType()
	}
	return st.s.forum.IssueOAuthAccess(ctx, g)
}

func (st storage) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	g, ok := grantOf(req)
	if !ok {
		return "", "", time.Time{}, oidc.ErrUnsupportedGrantType()
	}
	if _, fromCode := req.(authRequest); fromCode {
		current = ""
	}
	return st.s.forum.IssueOAuthTokens(ctx, g, current)
}

func (st storage) TokenRequestByRefreshToken(ctx context.Context, refresh string) (op.RefreshTokenRequest, error) {
	g, err := st.s.forum.OAuthRefreshGrant(ctx, refresh)
	if err != nil {
		return nil, op.ErrInvalidRefreshToken
	}
	if err := st.s.checkResource(ctx, g.Resource); err != nil {
		return nil, err
	}
	return &refreshRequest{g: g, scopes: g.Scopes}, nil
}

func (st storage) TerminateSession(context.Context, string, string) error { return nil }

func (st storage) RevokeToken(ctx context.Context, token, _, clientID string) *oidc.Error {
	if err := st.s.forum.RevokeOAuthSecret(ctx, token, clientID); err != nil {
		return oidc.ErrServerError().WithParent(err)
	}
	return nil
}

func (st storage) GetRefreshTokenInfo(ctx context.Context, clientID, token string) (string, string, error) {
	g, err := st.s.forum.OAuthRefreshGrant(ctx, token)
	if err != nil || g.ClientID != clientID {
		return "", "", op.ErrInvalidRefreshToken
	}
	return g.Identity, token, nil
}

func (st storage) SigningKey(context.Context) (op.SigningKey, error) { return st.s.signing, nil }

func (st storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.EdDSA}, nil
}

func (st storage) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{publicKey{st.s.signing}}, nil
}

func (st storage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := st.s.lookupClient(ctx, id)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (st storage) AuthorizeClientIDSecret(context.Context, string, string) error {
	return oidc.ErrInvalidClient().WithDescription("clients here are public: no secret, PKCE instead")
}

func (st storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

func (st storage) SetUserinfoFromToken(context.Context, *oidc.UserInfo, string, string, string) error {
	return errors.New("no userinfo")
}

func (st storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errors.New("no introspection")
}

func (st storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (st storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("no client keys")
}

func (st storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("no JWT profile")
}

func (st storage) Health(ctx context.Context) error { return st.s.forum.Ping(ctx) }

// checkResource holds a token request to RFC 8707: it names exactly the
// resource the grant is for.
//
// Reading: RFC 8707 lets a client leave resource out of the token
// request; the MCP authorization spec says it MUST send it in both the
// authorization and the token request, so a token request without it is
// refused, as one naming another resource is: invalid_target.
func (s *Server) checkResource(ctx context.Context, want string) error {
	m := memoOf(ctx)
	if m == nil || len(m.resources) != 1 || m.resources[0] != want {
		return oidc.ErrInvalidTarget().WithDescription("resource must be %s", want)
	}
	return nil
}

// checkScopes keeps the scopes Parley serves, the rights, and drops the
// OpenID ones: Parley has no userinfo to give.
func checkScopes(scopes []string) []string {
	return slices.DeleteFunc(slices.Clone(scopes), func(s string) bool { return !slices.Contains(Scopes, s) })
}
