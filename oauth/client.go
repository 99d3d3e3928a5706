package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"syscall"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"parley/services"
)

// client is an OAuth client as zitadel/oidc sees it: public (no secret,
// PKCE instead), native (loopback redirects on any port, custom schemes),
// authorization code and refresh tokens only, opaque access tokens.
type client struct {
	id        string
	name      string
	redirects []string
}

var _ op.Client = client{}

func (c client) GetID() string                    { return c.id }
func (c client) RedirectURIs() []string           { return c.redirects }
func (c client) PostLogoutRedirectURIs() []string { return nil }
func (c client) ApplicationType() op.ApplicationType {
	return op.ApplicationTypeNative
}
func (c client) AuthMethod() oidc.AuthMethod { return oidc.AuthMethodNone }
func (c client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
}
func (c client) LoginURL(id string) string            { return ConsentPath + "?id=" + url.QueryEscape(id) }
func (c client) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeBearer }
func (c client) IDTokenLifetime() time.Duration       { return 0 }
func (c client) DevMode() bool                        { return false }
func (c client) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c client) ClockSkew() time.Duration             { return 0 }
func (c client) IsScopeAllowed(scope string) bool     { return slices.Contains(Scopes, scope) }
func (c client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// The limits of fetching a client's metadata document.
const (
	MetadataMaxBytes = 64 << 10
	MetadataTimeout  = 5 * time.Second
)

// metadataDocument is what a Client ID Metadata Document says that
// Parley reads.
type metadataDocument struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
}

// isMetadataURL reports whether a client_id names a metadata document: an
// HTTPS URL with a path.
func isMetadataURL(id string) bool {
	u, err := url.Parse(id)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.Path != "" && u.Path != "/" && u.Fragment == "" && u.User == nil
}

// lookupClient finds a client: one the operator registered, or else one
// whose client_id is the HTTPS URL of its metadata document, fetched now.
func (s *Server) lookupClient(ctx context.Context, id string) (client, error) {
	if m := memoOf(ctx); m != nil && m.client != nil && m.client.id == id {
		return *m.client, nil
	}
	c, err := s.findClient(ctx, id)
	if err == nil {
		if m := memoOf(ctx); m != nil {
			m.client = &c
		}
	}
	return c, err
}

func (s *Server) findClient(ctx context.Context, id string) (client, error) {
	reg, err := s.forum.RegisteredOAuthClient(ctx, id)
	if err == nil {
		return client{id: reg.ID, name: reg.Name, redirects: reg.RedirectURIs}, nil
	}
	if _, unexpected := services.AsRefusal(err); unexpected {
		return client{}, err
	}
	if !isMetadataURL(id) {
		return client{}, fmt.Errorf("client %q is not registered, and is not the HTTPS URL of a metadata document", id)
	}
	doc, err := s.fetchMetadata(ctx, id)
	if err != nil {
		return client{}, fmt.Errorf("client metadata %s: %w", id, err)
	}
	name := doc.ClientName
	if name == "" {
		name = id
	}
	return client{id: id, name: name, redirects: doc.RedirectURIs}, nil
}

// fetchMetadata reads a Client ID Metadata Document: GET, no redirects, at
// most MetadataMaxBytes within MetadataTimeout, from a public address
// only (unless the operator allows private ones), and it must name itself.
func (s *Server) fetchMetadata(ctx context.Context, id string) (metadataDocument, error) {
	ctx, cancel := context.WithTimeout(ctx, MetadataTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return metadataDocument{}, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.fetch.Do(req)
	if err != nil {
		return metadataDocument{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return metadataDocument{}, fmt.Errorf("answered %s", resp.Status)
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "application/json" {
		return metadataDocument{}, fmt.Errorf("Content-Type is %q, not application/json", ct)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MetadataMaxBytes+1))
	if err != nil {
		return metadataDocument{}, err
	}
	if len(body) > MetadataMaxBytes {
		return metadataDocument{}, fmt.Errorf("the document is larger than %d bytes", MetadataMaxBytes)
	}
	var doc metadataDocument
	if err := json.Unmarshal(body, &doc); err != nil {
		return metadataDocument{}, fmt.Errorf("not JSON: %w", err)
	}
	if doc.ClientID != id {
		return metadataDocument{}, fmt.Errorf("the document names client_id %q, not its own URL", doc.ClientID)
	}
	if len(doc.RedirectURIs) == 0 {
		return metadataDocument{}, errors.New("the document lists no redirect_uris")
	}
	if m := doc.TokenEndpointAuthMethod; m != "" && m != string(oidc.AuthMethodNone) {
		return metadataDocument{}, fmt.Errorf("token_endpoint_auth_method %q: only public clients (none) are served", m)
	}
	if len([]rune(doc.ClientName)) > 100 {
		doc.ClientName = string([]rune(doc.ClientName)[:100])
	}
	return doc, nil
}

// fetcher is the HTTP client for metadata documents: no proxy, no
// redirects, and a dialer that refuses every address that is not public
// unless allowPrivate (for tests and closed networks). The check is made
// on the address dialled, after name resolution, so no DNS answer can
// point it inward.
func fetcher(base *http.Transport, allowPrivate bool) *http.Client {
	var tr *http.Transport
	if base != nil {
		tr = base.Clone()
	} else {
		tr = http.DefaultTransport.(*http.Transport).Clone()
	}
	tr.Proxy = nil
	dialer := &net.Dialer{Timeout: MetadataTimeout, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return err
		}
		if !allowPrivate && !publicAddr(ap.Addr()) {
			return fmt.Errorf("refusing to fetch client metadata from %s, not a public address", ap.Addr())
		}
		return nil
	}}
	tr.DialContext = dialer.DialContext
	tr.ResponseHeaderTimeout = MetadataTimeout
	return &http.Client{Transport: tr, Timeout: MetadataTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New("a metadata document is not redirected") }}
}

var sharedAddress = netip.MustParsePrefix("100.64.0.0/10") // RFC 6598, carrier-grade NAT

func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsGlobalUnicast() && !a.IsPrivate() && !a.IsLoopback() && !a.IsLinkLocalUnicast() && !sharedAddress.Contains(a)
}
