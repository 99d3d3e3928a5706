package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The oauth section checks what an MCP client discovers before a browser
// is involved (§2.1, errata 2: tokens through OAuth 2.1, authorization
// code with PKCE, as MCP's authorization rules require): the 401's
// challenge, the protected resource metadata (RFC 9728), the
// authorization server's metadata (RFC 8414), and, given a client the
// operator registered for the kit, that an authorization request without
// PKCE S256 or without its resource (RFC 8707) is refused. A server that
// advertises no OAuth skips it.

var noRedirect = &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

var resourceMetadataParam = regexp.MustCompile(`resource_metadata="([^"]+)"`)

// oauthChallenge posts a tools/call to resource with token (none if "")
// and returns the answer's status and WWW-Authenticate.
func oauthChallenge(resource, token string) (int, string, error) {
	req, _ := http.NewRequest("POST", resource, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		return 0, "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), nil
}

// oauthResource is the OAuth-protected MCP endpoint: --oauth-resource, or
// /mcp when its 401 names protected resource metadata; else the section
// is skipped.
func (k *kit) oauthResource() (resource, metadata string, err error) {
	resource = k.opts.oauth.resource
	if resource == "" {
		resource = k.base + "/mcp"
	}
	status, challenge, err := oauthChallenge(resource, "")
	if err != nil {
		return "", "", err
	}
	m := resourceMetadataParam.FindStringSubmatch(challenge)
	if m == nil {
		if k.opts.oauth.resource == "" {
			return "", "", errSkip("the server advertises no OAuth at /mcp (its 401 names no resource_metadata); name an OAuth MCP endpoint with --oauth-resource")
		}
		return "", "", fmt.Errorf("%s without a token: status %d, WWW-Authenticate %q: no resource_metadata", resource, status, challenge)
	}
	return resource, m[1], nil
}

// wellKnown inserts /.well-known/NAME before a URL's path (RFC 8414 §3,
// RFC 9728 §3.1).
func wellKnown(raw, name string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Path = "/.well-known/" + name + strings.TrimSuffix(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

func getJSON(u string) (map[string]any, error) {
	resp, err := noRedirect.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("GET %s: status %d", u, resp.StatusCode)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("GET %s: not a JSON object: %.200s", u, raw)
	}
	return out, nil
}

// authServer reads the resource's metadata and its first authorization
// server's.
func (k *kit) authServer() (resource string, as map[string]any, err error) {
	resource, metadata, err := k.oauthResource()
	if err != nil {
		return "", nil, err
	}
	prm, err := getJSON(metadata)
	if err != nil {
		return "", nil, err
	}
	servers := list(prm, "authorization_servers")
	if len(servers) == 0 {
		return "", nil, fmt.Errorf("the protected resource metadata names no authorization_servers: %s", show(prm))
	}
	issuer, _ := servers[0].(string)
	as, err = getJSON(wellKnown(issuer, "oauth-authorization-server"))
	if err != nil {
		// OpenID Connect discovery is the other place MCP clients look.
		as, err = getJSON(strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration")
	}
	if err != nil {
		return "", nil, fmt.Errorf("no authorization server metadata for %s: %w", issuer, err)
	}
	if str(as, "issuer") != issuer {
		return "", nil, fmt.Errorf("the authorization server's issuer is %q, want %q as the resource metadata names it", str(as, "issuer"), issuer)
	}
	return resource, as, nil
}

// authorize sends an authorization request with query as given (nothing
// followed) and returns where it sends the browser.
func authorize(as map[string]any, query url.Values) (status int, location *url.URL, err error) {
	endpoint := str(as, "authorization_endpoint")
	resp, err := noRedirect.Get(endpoint + "?" + query.Encode())
	if err != nil {
		return 0, nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	loc, _ := resp.Location()
	return resp.StatusCode, loc, nil
}

// refusedToClient checks that an authorization request was answered by
// sending the browser back to the client's redirect URI with error want
// (RFC 6749 §4.1.2.1), its state, and iss when the server says it adds one
// (RFC 9207).
func (k *kit) refusedToClient(as map[string]any, query url.Values, want string) error {
	status, loc, err := authorize(as, query)
	if err != nil {
		return err
	}
	if loc == nil || !strings.HasPrefix(loc.String(), k.opts.oauth.redirect) {
		return fmt.Errorf("status %d, Location %v: want a redirect to %s with error=%s", status, loc, k.opts.oauth.redirect, want)
	}
	q := loc.Query()
	return all(
		expect(q.Get("error") == want, "error=%q (%s), want %s", q.Get("error"), q.Get("error_description"), want),
		expect(q.Get("state") == query.Get("state"), "state %q, want %q", q.Get("state"), query.Get("state")),
		expect(as["authorization_response_iss_parameter_supported"] != true || q.Get("iss") == str(as, "issuer"), "iss %q, want %q (authorization_response_iss_parameter_supported)", q.Get("iss"), str(as, "issuer")))
}

// authRequest is a complete authorization request for the kit's client.
func (k *kit) authRequest(resource string) (url.Values, error) {
	if k.opts.oauth.client == "" || k.opts.oauth.redirect == "" {
		return nil, errSkip("no --oauth-client and --oauth-redirect-uri: no registered client to send authorization requests")
	}
	sum := sha256.Sum256([]byte("conform-verifier-" + k.run + "-0123456789abcdef0123456789"))
	return url.Values{
		"response_type": {"code"}, "client_id": {k.opts.oauth.client}, "redirect_uri": {k.opts.oauth.redirect},
		"scope": {"read"}, "state": {"conform-" + k.run}, "resource": {resource},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
	}, nil
}

func without(q url.Values, keys ...string) url.Values {
	out := url.Values{}
	for key, v := range q {
		if !slices.Contains(keys, key) {
			out[key] = v
		}
	}
	return out
}

func oauthChecks() []check {
	s := "oauth"
	ref := "§2.1 (errata 2), RFC 9728"
	return []check{
		{s, "the OAuth MCP endpoint answers a call without a token 401 with WWW-Authenticate: Bearer resource_metadata", ref, false, true, func(k *kit) error {
			resource, _, err := k.oauthResource()
			if err != nil {
				return err
			}
			status, challenge, err := oauthChallenge(resource, "")
			if err != nil {
				return err
			}
			return expect(status == 401 && strings.HasPrefix(challenge, "Bearer "), "status %d, WWW-Authenticate %q", status, challenge)
		}},
		{s, "the protected resource metadata names the resource and its authorization servers, also at its well-known URL", ref, false, true, func(k *kit) error {
			resource, metadata, err := k.oauthResource()
			if err != nil {
				return err
			}
			var errs []error
			for _, u := range []string{metadata, wellKnown(resource, "oauth-protected-resource")} {
				prm, err := getJSON(u)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				errs = append(errs,
					expect(str(prm, "resource") == resource, "%s: resource %q, want %q", u, str(prm, "resource"), resource),
					expect(len(list(prm, "authorization_servers")) > 0, "%s names no authorization_servers", u))
			}
			return all(errs...)
		}},
		{s, "the authorization server's metadata offers the authorization code with PKCE S256", "§2.1 (errata 2), RFC 8414", false, true, func(k *kit) error {
			_, as, err := k.authServer()
			if err != nil {
				return err
			}
			grants := list(as, "grant_types_supported")
			return all(
				expect(str(as, "authorization_endpoint") != "" && str(as, "token_endpoint") != "", "no authorization_endpoint or token_endpoint: %s", show(as)),
				expect(has(list(as, "response_types_supported"), "code"), "response_types_supported %v lacks code", as["response_types_supported"]),
				expect(has(list(as, "code_challenge_methods_supported"), "S256"), "code_challenge_methods_supported %v lacks S256", as["code_challenge_methods_supported"]),
				expect(grants == nil || has(grants, "authorization_code"), "grant_types_supported %v lacks authorization_code", grants))
		}},
		{s, "an unknown access token is 401 invalid_token with the challenge", "§2.1 (errata 2), RFC 6750 §3.1", false, true, func(k *kit) error {
			resource, _, err := k.oauthResource()
			if err != nil {
				return err
			}
			status, challenge, err := oauthChallenge(resource, "conform-not-an-access-token-"+k.run)
			if err != nil {
				return err
			}
			return expect(status == 401 && strings.Contains(challenge, `error="invalid_token"`) && resourceMetadataParam.MatchString(challenge),
				"status %d, WWW-Authenticate %q", status, challenge)
		}},
		{s, "an authorization request without PKCE S256 is refused invalid_request; a complete one is not refused", "§2.1 (errata 2), OAuth 2.1 §4.1.1", false, true, func(k *kit) error {
			resource, as, err := k.authServer()
			if err != nil {
				return err
			}
			q, err := k.authRequest(resource)
			if err != nil {
				return err
			}
			plain := without(q, "code_challenge", "code_challenge_method")
			plain.Set("code_challenge", "conform-plain-challenge-0123456789012345678901234")
			plain.Set("code_challenge_method", "plain")
			status, loc, err := authorize(as, q)
			if err != nil {
				return err
			}
			if loc != nil && loc.Query().Get("error") != "" && strings.HasPrefix(loc.String(), k.opts.oauth.redirect) {
				return fmt.Errorf("a complete authorization request was refused: status %d, %s", status, loc)
			}
			return all(
				expect(status < 400, "a complete authorization request: status %d", status),
				k.refusedToClient(as, without(q, "code_challenge", "code_challenge_method"), "invalid_request"),
				k.refusedToClient(as, plain, "invalid_request"))
		}},
		{s, "an authorization request without its resource is refused invalid_target", "§2.1 (errata 2), RFC 8707 §2", false, true, func(k *kit) error {
			resource, as, err := k.authServer()
			if err != nil {
				return err
			}
			q, err := k.authRequest(resource)
			if err != nil {
				return err
			}
			other := without(q, "resource")
			other.Set("resource", resource+"/elsewhere")
			return all(k.refusedToClient(as, without(q, "resource"), "invalid_target"), k.refusedToClient(as, other, "invalid_target"))
		}},
	}
}
