package mcp_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/oauth"
	"parley/services"
)

// A minimal OAuth client, to send what no real client would: each
// refusal's request differs from a good one in one field.

const testVerifier = "parley-test-verifier-0123456789-abcdefghijklmnopqrstuvwxyz"

func challengeOf(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// authorizeQuery is a good authorization request of w's client.
func (w oauthWorld) authorizeQuery() url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {w.metadataURL}, "redirect_uri": {w.redirect},
		"scope": {"read write"}, "state": {"s1"}, "code_challenge": {challengeOf(testVerifier)},
		"code_challenge_method": {"S256"}, "resource": {w.base + "/mcp/oauth"}}
}

func (w oauthWorld) authorize(t *testing.T, q url.Values) *http.Response {
	t.Helper()
	resp, err := noFollow.Get(w.base + "/oauth/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// approve takes an authorization request through consent, as the signed-in
// human, and returns the code.
func (w oauthWorld) approve(t *testing.T, q url.Values, handle string, rights ...string) string {
	t.Helper()
	resp := w.authorize(t, q)
	consent, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || consent.Path != "/oauth/consent" {
		t.Fatalf("authorize: %d %q, want 302 to the consent page", resp.StatusCode, resp.Header.Get("Location"))
	}
	form := url.Values{"_csrf": {w.session.CSRF}, "id": {consent.Query().Get("id")}, "handle": {handle}, "rights": rights, "decision": {"approve"}}
	req, _ := http.NewRequest(http.MethodPost, w.base+"/oauth/consent", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", w.cookie)
	resp, err = noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || back == nil || back.Query().Get("code") == "" {
		t.Fatalf("consent: %d %q, want 303 back with a code", resp.StatusCode, resp.Header.Get("Location"))
	}
	return back.Query().Get("code")
}

func (w oauthWorld) token(t *testing.T, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(w.base+"/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	raw, _ := io.ReadAll(resp.Body)
	json.Unmarshal(raw, &body)
	return resp.StatusCode, body
}

func (w oauthWorld) exchange(code string) url.Values {
	return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {testVerifier}, "redirect_uri": {w.redirect},
		"client_id": {w.metadataURL}, "resource": {w.base + "/mcp/oauth"}}
}

// mcpCall posts one JSON-RPC request to /mcp/oauth.
func (w oauthWorld) mcpCall(t *testing.T, access, body string) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, w.base+"/mcp/oauth", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if access != "" {
		req.Header.Set("Authorization", "Bearer "+access)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	json.Unmarshal(raw, &out)
	return resp, out
}

const toolsList = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`

// TestOAuthAuthorizationRefusals: an authorization request that is wrong
// in one way is refused, on both databases. A wrong redirect_uri (or an
// unknown client) is shown, never redirected to; any other fault goes
// back to the client's redirect_uri as an OAuth error, with iss.
func TestOAuthAuthorizationRefusals(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := startOAuth(t, db, services.Config{})
		for _, tc := range []struct {
			name  string
			edit  func(q url.Values)
			error string // "" for a 400 shown, not redirected
		}{
			{"redirect_uri not registered", func(q url.Values) { q.Set("redirect_uri", "https://evil.example/callback") }, ""},
			{"redirect_uri on another loopback path", func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:1/other") }, ""},
			{"unknown client", func(q url.Values) { q.Set("client_id", "nobody") }, ""},
			{"client metadata that does not exist", func(q url.Values) { q.Set("client_id", w.metadata.URL+"/missing.json") }, ""},
			{"no PKCE", func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") }, "invalid_request"},
			{"PKCE plain", func(q url.Values) { q.Set("code_challenge", testVerifier); q.Set("code_challenge_method", "plain") }, "invalid_request"},
			{"PKCE without a method", func(q url.Values) { q.Del("code_challenge_method") }, "invalid_request"},
			{"no resource", func(q url.Values) { q.Del("resource") }, "invalid_target"},
			{"another resource", func(q url.Values) { q.Set("resource", w.base+"/mcp") }, "invalid_target"},
			{"two resources", func(q url.Values) { q.Add("resource", "https://other.example/mcp") }, "invalid_target"},
			{"response_type token", func(q url.Values) { q.Set("response_type", "token") }, "unauthorized_client"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				q := w.authorizeQuery()
				tc.edit(q)
				resp := w.authorize(t, q)
				loc, _ := url.Parse(resp.Header.Get("Location"))
				if tc.error == "" {
					if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
						t.Fatalf("%d %q; want 400, shown, not redirected", resp.StatusCode, resp.Header.Get("Location"))
					}
					return
				}
				if resp.StatusCode != http.StatusFound || loc.Query().Get("error") != tc.error || loc.Query().Get("iss") != w.base ||
					loc.Query().Get("state") != "s1" || !strings.HasPrefix(loc.String(), w.redirect) {
					t.Fatalf("%d %q; want 302 to the client with error=%s, state and iss", resp.StatusCode, loc, tc.error)
				}
			})
		}
	})
}

// TestOAuthTokenRefusals: the token endpoint and the protected resource
// refuse what does not hold, on both databases: a code replayed or
// exchanged without its verifier or for another resource, an expired
// access token (401 naming the resource metadata), a token issued for
// another resource (token_invalid), and a call beyond the rights granted
// (403 insufficient_scope, the protocol's refusal inside).
func TestOAuthTokenRefusals(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var ahead atomic.Int64 // how far the forum's clock runs ahead
		w := startOAuth(t, db, services.Config{Now: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }})

		t.Run("code refusals", func(t *testing.T) {
			for _, tc := range []struct {
				name, field, value, error string
			}{
				{"wrong verifier", "code_verifier", "another-verifier-0123456789-abcdefghijklmnopqrstuvwxyz", "invalid_grant"},
				{"no verifier", "code_verifier", "", "invalid_request"},
				{"another resource", "resource", w.base + "/mcp", "invalid_target"},
				{"no resource", "resource", "", "invalid_target"},
				{"another redirect_uri", "redirect_uri", "http://127.0.0.1:1/other", "invalid_grant"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					form := w.exchange(w.approve(t, w.authorizeQuery(), "coder", "read"))
					if tc.value == "" {
						form.Del(tc.field)
					} else {
						form.Set(tc.field, tc.value)
					}
					if status, body := w.token(t, form); status != http.StatusBadRequest || body["error"] != tc.error {
						t.Fatalf("%d %v; want 400 %s", status, body, tc.error)
					}
				})
			}
		})

		code := w.approve(t, w.authorizeQuery(), "reader", "read")
		status, tokens := w.token(t, w.exchange(code))
		if status != http.StatusOK || tokens["scope"] != "read offline_access" {
			t.Fatalf("exchange: %d %v", status, tokens)
		}
		access := tokens["access_token"].(string)
		if status, body := w.token(t, w.exchange(code)); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
			t.Fatalf("a replayed code: %d %v; want 400 invalid_grant", status, body)
		}

		t.Run("insufficient rights", func(t *testing.T) {
			resp, body := w.mcpCall(t, access, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"post","arguments":{"kind":"ask","body":"May I?"}}}`)
			challenge := resp.Header.Get("WWW-Authenticate")
			data, _ := body["error"].(map[string]any)["data"].(map[string]any)
			refusal, _ := data["error"].(map[string]any)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(challenge, `error="insufficient_scope"`) ||
				!strings.Contains(challenge, `scope="write"`) || refusal["reason"] != "token_right_missing" || body["id"] != float64(7) {
				t.Fatalf("%d %q %v; want 403 insufficient_scope for write, token_right_missing inside", resp.StatusCode, challenge, body)
			}
		})

		t.Run("another resource", func(t *testing.T) {
			// The same database and key, another public address: the token
			// is sealed by the same key but was issued for another resource.
			other, err := oauth.New(context.Background(), w.forum, oauth.Options{Issuer: "https://other.example"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = other.Authenticate(context.Background(), access)
			if r, _ := services.AsRefusal(err); err == nil || r.Reason != services.TokenInvalid {
				t.Fatalf("a token for %s/mcp/oauth at https://other.example: %v; want token_invalid", w.base, err)
			}
		})

		t.Run("a token that is not one", func(t *testing.T) {
			resp, body := w.mcpCall(t, "pt_not_an_access_token", toolsList)
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
				t.Fatalf("%d %q %v; want 401 invalid_token", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
			}
		})

		t.Run("expired", func(t *testing.T) {
			if resp, _ := w.mcpCall(t, access, toolsList); resp.StatusCode != http.StatusOK {
				t.Fatalf("before expiry: %d", resp.StatusCode)
			}
			ahead.Store(int64(services.OAuthAccessLifetime + time.Minute))
			resp, body := w.mcpCall(t, access, toolsList)
			challenge := resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) ||
				!strings.Contains(challenge, `resource_metadata="`+w.base+`/.well-known/oauth-protected-resource/mcp/oauth"`) {
				t.Fatalf("%d %q %v; want 401 naming the resource metadata", resp.StatusCode, challenge, body)
			}
			// The refresh token outlives it, and gets a new one.
			status, fresh := w.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tokens["refresh_token"].(string)},
				"client_id": {w.metadataURL}, "resource": {w.base + "/mcp/oauth"}})
			if status != http.StatusOK {
				t.Fatalf("refresh after expiry: %d %v", status, fresh)
			}
			if resp, _ := w.mcpCall(t, fresh["access_token"].(string), toolsList); resp.StatusCode != http.StatusOK {
				t.Fatalf("the refreshed token: %d", resp.StatusCode)
			}
		})
	})
}

// TestOAuthClientRegistration: an operator's registration is a client as
// good as a metadata document, and a metadata document on a private
// address is not fetched unless the operator allows it.
func TestOAuthClientRegistration(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := startOAuth(t, db, services.Config{})
		if err := w.forum.AddOAuthClient(context.Background(), services.OAuthClient{ID: "desk-app", Name: "Desk app",
			RedirectURIs: []string{"http://127.0.0.1/cb"}}); err != nil {
			t.Fatal(err)
		}
		q := w.authorizeQuery()
		q.Set("client_id", "desk-app")
		q.Set("redirect_uri", "http://127.0.0.1:5555/cb") // a loopback redirect admits any port
		w.redirect = "http://127.0.0.1:5555/cb"
		code := w.approve(t, q, "desk", "read", "write")
		form := w.exchange(code)
		form.Set("client_id", "desk-app")
		if status, body := w.token(t, form); status != http.StatusOK || body["access_token"] == nil {
			t.Fatalf("exchange for a registered client: %d %v", status, body)
		}

		guarded, err := oauth.New(context.Background(), w.forum, oauth.Options{Issuer: w.base})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		guarded.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/oauth/authorize?"+w.authorizeQuery().Encode(), nil))
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "not a public address") {
			t.Fatalf("a metadata document on loopback without the operator's leave: %d %s", rec.Code, rec.Body.String())
		}
	})
}

// TestOAuthConsentForm: the consent form is a signed-in human's, checked
// against CSRF; denying sends the client access_denied, with its state
// and iss; a page of the forum is not shown to someone signed out.
func TestOAuthConsentForm(t *testing.T) {
	w := startOAuth(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	consentID := func() string {
		resp := w.authorize(t, w.authorizeQuery())
		loc, _ := url.Parse(resp.Header.Get("Location"))
		return loc.Query().Get("id")
	}
	answer := func(form url.Values, cookie string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, w.base+"/oauth/consent", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	id := consentID()
	if resp := answer(url.Values{"_csrf": {"forged"}, "id": {id}, "handle": {"x"}, "rights": {"read"}, "decision": {"approve"}}, w.cookie); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a forged CSRF token: %d, want 401", resp.StatusCode)
	}
	if resp := answer(url.Values{"_csrf": {w.session.CSRF}, "id": {id}, "handle": {"x"}, "rights": {"read"}, "decision": {"approve"}}, ""); resp.StatusCode != http.StatusSeeOther ||
		!strings.HasPrefix(resp.Header.Get("Location"), "/signin") {
		t.Fatalf("signed out: %d %q, want 303 to sign in", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, err := noFollow.Get(w.base + "/oauth/consent?id=" + id)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/signin?next=") {
		t.Fatalf("the consent page signed out: %d %q; want 303 to sign in, then back", resp.StatusCode, loc)
	}
	resp = answer(url.Values{"_csrf": {w.session.CSRF}, "id": {id}, "decision": {"deny"}}, w.cookie)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != "s1" || loc.Query().Get("iss") != w.base {
		t.Fatalf("deny: %d %q; want 303 with access_denied, state and iss", resp.StatusCode, loc)
	}
	if resp := answer(url.Values{"_csrf": {w.session.CSRF}, "id": {id}, "handle": {"x"}, "rights": {"read"}, "decision": {"approve"}}, w.cookie); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("approving a denied request: %d, want 401 token_invalid", resp.StatusCode)
	}
}
