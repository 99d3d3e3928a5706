package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"parley/services"
)

// The paths this package serves or names.
const (
	ResourcePath       = "/mcp/oauth"                                           // the OAuth-protected MCP endpoint
	ResourceMetadata   = "/.well-known/oauth-protected-resource" + ResourcePath // RFC 9728, path-specific
	ServerMetadataPath = "/.well-known/oauth-authorization-server"              // RFC 8414
	ConsentPath        = "/oauth/consent"                                       // the human's page (package web)
	AuthorizePath      = "/oauth/authorize"
	TokenPath          = "/oauth/token"
	RevokePath         = "/oauth/revoke"
	KeysPath           = "/oauth/keys" // the ID tokens' key (keys.go)
)

// Scopes are the scopes Parley serves: the rights of a token. A client
// asks for some; the human grants at most those (services.ApproveOAuthAs).
var Scopes = []string{string(services.RightRead), string(services.RightWrite), string(services.RightLock), string(services.RightVerify)}

// Options configure the authorization server.
type Options struct {
	// Issuer is the server's public base URL, scheme and host, no path:
	// "https://forum.example". It names the authorization server and,
	// with ResourcePath, the protected resource.
	Issuer string
	// AllowPrivateClientMetadata lets client metadata documents be
	// fetched from loopback and private addresses: for tests and closed
	// networks only.
	AllowPrivateClientMetadata bool
	// MetadataTransport is the transport metadata documents are fetched
	// over (its TLS settings; proxy, dialer and redirects are this
	// package's); nil for the default. Tests pass their TLS server's.
	MetadataTransport *http.Transport
	Logger            *slog.Logger
}

// Server is the OAuth 2.1 authorization server for MCP clients, built on
// zitadel/oidc's op package: authorization code with PKCE (S256 only),
// refresh tokens that rotate, short-lived opaque access tokens, clients
// registered by the operator or named by the HTTPS URL of their metadata
// document. It also checks access tokens for the protected resource.
type Server struct {
	forum    *services.Forum
	issuer   string
	resource string
	provider *op.Provider
	signing  signingKey
	router   http.Handler
	fetch    *http.Client
	log      *slog.Logger
}

// New builds the authorization server. The key that seals its tokens is
// the database's (services.OAuthCryptoKey), the same for every server.
func New(ctx context.Context, forum *services.Forum, opts Options) (*Server, error) {
	u, err := url.Parse(opts.Issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("oauth issuer %q: want the public base URL, https://host[:port] without path", opts.Issuer)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	issuer := strings.TrimSuffix(opts.Issuer, "/")
	key, err := forum.OAuthCryptoKey(ctx)
	if err != nil {
		return nil, err
	}
	s := &Server{forum: forum, issuer: issuer, resource: issuer + ResourcePath, log: opts.Logger, signing: deriveSigningKey(key),
		fetch: fetcher(opts.MetadataTransport, opts.AllowPrivateClientMetadata)}
	config := &op.Config{CryptoKey: key, CodeMethodS256: true, GrantTypeRefreshToken: true, SupportedScopes: Scopes}
	options := []op.Option{
		op.WithCustomAuthEndpoint(op.NewEndpoint(strings.TrimPrefix(AuthorizePath, "/"))),
		op.WithCustomTokenEndpoint(op.NewEndpoint(strings.TrimPrefix(TokenPath, "/"))),
		op.WithCustomRevocationEndpoint(op.NewEndpoint(strings.TrimPrefix(RevokePath, "/"))),
		op.WithCustomKeysEndpoint(op.NewEndpoint(strings.TrimPrefix(KeysPath, "/"))),
		op.WithLogger(opts.Logger),
	}
	if u.Scheme == "http" {
		// Reading: an http issuer serves tests and loopback only; the
		// library refuses one unless told.
		options = append(options, op.WithAllowInsecure())
	}
	s.provider, err = op.NewProvider(config, storage{s}, op.StaticIssuer(issuer), options...)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	s.router = op.CreateRouter(validating{s.provider, s})
	return s, nil
}

// Issuer is the authorization server's identifier.
func (s *Server) Issuer() string { return s.issuer }

// Resource is the protected resource's identifier: the /mcp/oauth URL.
func (s *Server) Resource() string { return s.resource }

// Handler serves the authorization, token, revocation and keys endpoints.
// It reads RFC 8707's resource before the library does (which knows it
// not), and adds RFC 9207's iss to every authorization response.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		m := &memo{resources: r.Form["resource"]}
		r = r.WithContext(op.ContextWithIssuer(context.WithValue(r.Context(), memoKey{}, m), s.issuer))
		if r.URL.Path == AuthorizePath {
			w = &issWriter{ResponseWriter: w, iss: s.issuer}
		}
		// This server serves one resource: a token request for any other
		// (or none) is refused before its code or refresh token is looked
		// at, with RFC 8707's error.
		if r.URL.Path == TokenPath && r.Method == http.MethodPost {
			if err := s.checkResource(r.Context(), s.resource); err != nil {
				op.RequestError(w, r, err, s.log)
				return
			}
		}
		s.router.ServeHTTP(w, r)
	})
}

// validating is the provider with Parley's checks of an authorization
// request added to the library's (op.AuthorizeValidator).
type validating struct {
	*op.Provider
	s *Server
}

// ValidateAuthRequest checks an authorization request: the client and
// its redirect_uri first (a failure there is shown, never redirected),
// then PKCE with S256, then the resource.
//
// Reading: a request without scope asks for read and write, the rights
// of an agent that takes part; openid and the other OpenID scopes are
// dropped, since Parley has no userinfo to give.
func (v validating) ValidateAuthRequest(ctx context.Context, req *oidc.AuthRequest, _ op.Storage, verifier *op.IDTokenHintVerifier) (string, error) {
	c, err := v.s.lookupClient(ctx, req.ClientID)
	if err != nil {
		return "", oidc.ErrInvalidRequestRedirectURI().WithDescription("unknown client: %v", err)
	}
	req.Scopes = checkScopes(req.Scopes)
	if len(req.Scopes) == 0 {
		req.Scopes = oidc.SpaceDelimitedArray{string(services.RightRead), string(services.RightWrite)}
	}
	sub, err := op.ValidateAuthRequestClient(ctx, req, c, verifier)
	if err != nil {
		return "", err
	}
	if req.CodeChallenge == "" || req.CodeChallengeMethod != oidc.CodeChallengeMethodS256 {
		return "", oidc.ErrInvalidRequest().WithDescription("PKCE is required, with code_challenge_method S256")
	}
	if req.ResponseMode != "" && req.ResponseMode != oidc.ResponseModeQuery {
		return "", oidc.ErrInvalidRequest().WithDescription("response_mode must be query")
	}
	if m := memoOf(ctx); m == nil || len(m.resources) != 1 || m.resources[0] != v.s.resource {
		return "", oidc.ErrInvalidTarget().WithDescription("resource must be %s", v.s.resource)
	}
	return sub, nil
}

// issWriter adds iss (RFC 9207) to a redirect to the client.
type issWriter struct {
	http.ResponseWriter
	iss string
}

func (w *issWriter) WriteHeader(status int) {
	if loc := w.Header().Get("Location"); status/100 == 3 && loc != "" && !strings.HasPrefix(loc, ConsentPath) {
		w.Header().Set("Location", withIss(loc, w.iss))
	}
	w.ResponseWriter.WriteHeader(status)
}

func withIss(loc, iss string) string {
	u, err := url.Parse(loc)
	if err != nil {
		return loc
	}
	q := u.Query()
	q.Set("iss", iss)
	u.RawQuery = q.Encode()
	return u.String()
}

// Approved is where the browser goes after a human approved request r: the
// client's redirect_uri with the code, the state and iss. The code is
// issued now.
func (s *Server) Approved(ctx context.Context, r services.OAuthRequest) (string, error) {
	loc, err := op.BuildAuthResponseCallbackURL(op.ContextWithIssuer(ctx, s.issuer), authRequest{r}, s.provider)
	if err != nil {
		return "", err
	}
	return withIss(loc, s.issuer), nil
}

// Denied is where the browser goes after a human refused request r:
// access_denied, with the state and iss.
func (s *Server) Denied(r services.OAuthRequest) (string, error) {
	e := oidc.ErrAccessDenied().WithDescription("the human refused")
	e.State = r.State
	loc, err := op.AuthResponseURL(r.RedirectURI, oidc.ResponseTypeCode, oidc.ResponseModeQuery, e, s.provider.Encoder())
	if err != nil {
		return "", err
	}
	return withIss(loc, s.issuer), nil
}

// FormActions are the origins a consent form may send the browser on to
// (its redirect), for the page's Content-Security-Policy form-action.
func FormActions(r services.OAuthRequest) string {
	u, err := url.Parse(r.RedirectURI)
	if err != nil || u.Scheme == "" {
		return ""
	}
	if u.Host == "" {
		return u.Scheme + ":"
	}
	return u.Scheme + "://" + u.Host
}

// Authenticate resolves an access token presented to the protected
// resource to its caller; token_invalid for one this server did not seal,
// unknown, expired, revoked, or issued for another resource.
func (s *Server) Authenticate(ctx context.Context, bearer string) (services.Caller, error) {
	plain, err := s.provider.Crypto().Decrypt(bearer)
	secret, _, ok := strings.Cut(plain, ":")
	if err != nil || !ok {
		return services.Caller{}, services.Refuse(services.TokenInvalid, "the access token is unknown, expired or revoked")
	}
	return s.forum.AuthenticateOAuth(ctx, secret, s.resource)
}

// Challenge is the WWW-Authenticate of a 401 from the protected resource:
// it names the resource metadata, where a client starts (RFC 9728 §5.1).
func (s *Server) Challenge(errCode, description string) string {
	h := fmt.Sprintf(`Bearer resource_metadata="%s%s"`, s.issuer, ResourceMetadata)
	if errCode != "" {
		h += fmt.Sprintf(`, error="%s", error_description="%s"`, errCode, strings.ReplaceAll(description, `"`, "'"))
	}
	return h
}

// InsufficientScope is the WWW-Authenticate of a 403: the rights the
// call needs (RFC 6750 §3.1).
func (s *Server) InsufficientScope(scope, description string) string {
	return fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s", resource_metadata="%s%s", error_description="%s"`,
		scope, s.issuer, ResourceMetadata, strings.ReplaceAll(description, `"`, "'"))
}

// ProtectedResourceMetadata is RFC 9728's document for /mcp/oauth.
func (s *Server) ProtectedResourceMetadata() []byte {
	b, _ := json.Marshal(map[string]any{
		"resource":                 s.resource,
		"authorization_servers":    []string{s.issuer},
		"scopes_supported":         Scopes,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "Parley (MCP over OAuth)",
		"resource_documentation":   s.issuer + "/.well-known/parley.json",
	})
	return b
}

// ServerMetadata is RFC 8414's document: the library's discovery, less
// what belongs to OpenID Connect, with what MCP clients look for.
func (s *Server) ServerMetadata(ctx context.Context) ([]byte, error) {
	ctx = op.ContextWithIssuer(ctx, s.issuer)
	doc := op.CreateDiscoveryConfig(ctx, s.provider, storage{s})
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	for _, k := range []string{"userinfo_endpoint", "end_session_endpoint", "device_authorization_endpoint", "check_session_iframe",
		"introspection_endpoint", "introspection_endpoint_auth_methods_supported", "introspection_endpoint_auth_signing_alg_values_supported",
		"id_token_signing_alg_values_supported", "subject_types_supported", "claims_supported", "request_object_signing_alg_values_supported",
		"token_endpoint_auth_signing_alg_values_supported", "revocation_endpoint_auth_signing_alg_values_supported", "request_parameter_supported",
		"backchannel_logout_supported", "backchannel_logout_session_supported"} {
		delete(m, k)
	}
	m["scopes_supported"] = Scopes
	m["response_types_supported"] = []string{string(oidc.ResponseTypeCode)}
	m["response_modes_supported"] = []string{string(oidc.ResponseModeQuery)}
	m["grant_types_supported"] = []string{string(oidc.GrantTypeCode), string(oidc.GrantTypeRefreshToken)}
	m["token_endpoint_auth_methods_supported"] = []string{string(oidc.AuthMethodNone)}
	m["revocation_endpoint_auth_methods_supported"] = []string{string(oidc.AuthMethodNone)}
	m["code_challenge_methods_supported"] = []string{string(oidc.CodeChallengeMethodS256)}
	m["authorization_response_iss_parameter_supported"] = true
	m["client_id_metadata_document_supported"] = true
	return json.Marshal(m)
}
