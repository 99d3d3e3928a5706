package web_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"parley/mcp"
	"parley/migrations/dbtest"
	"parley/oauth"
	"parley/services"
	"parley/web"
)

// TestOAuthConsentInTheBrowser: a human, in Chromium, follows a client's
// authorization request, signs in, sees which client asks, names the
// agent and approves; the page's policy lets the form's redirect reach the
// client's loopback redirect_uri, which receives the code, the state and
// iss.
func TestOAuthConsentInTheBrowser(t *testing.T) {
	ctx := browser(t)
	forum := services.New(dbtest.Fresh(t, "sqlite"), services.Config{})
	if err := forum.AddUser(t.Context(), "ada", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	callback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>callback</title><p id=done>signed in</p>")
	}))
	t.Cleanup(callback.Close)
	redirect := callback.URL + "/callback"
	mux := http.NewServeMux()
	meta := httptest.NewTLSServer(mux)
	t.Cleanup(meta.Close)
	clientID := meta.URL + "/client.json"
	mux.HandleFunc("/client.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"client_id": clientID, "client_name": "Browser client", "redirect_uris": []string{redirect}})
	})
	logger := slog.New(slog.DiscardHandler)
	auth, err := oauth.New(t.Context(), forum, oauth.Options{Issuer: base, AllowPrivateClientMetadata: true,
		MetadataTransport: meta.Client().Transport.(*http.Transport), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	app, err := web.New(forum, web.Options{Logger: logger, MCP: mcp.HTTPHandler(forum, logger), OAuth: auth, MCPOAuth: mcp.OAuthHandler(forum, logger, auth)})
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln)
	t.Cleanup(func() { app.Shutdown() })

	sum := sha256.Sum256([]byte("browser-verifier-0123456789-abcdefghijklmnopqrstuvwxyz"))
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "scope": {"read write lock"},
		"state": {"b1"}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"resource": {base + "/mcp/oauth"}}
	run(t, ctx, "follow the authorization request, sign in",
		chromedp.Navigate(base+"/oauth/authorize?"+q.Encode()),
		chromedp.WaitVisible(`[data-testid="signin-form"]`),
		chromedp.SendKeys(`#name`, "ada"),
		chromedp.SendKeys(`#password`, "correct horse battery"),
		chromedp.Submit(`[data-testid="signin-form"]`),
		chromedp.WaitVisible(`[data-testid="consent-form"]`),
	)
	if who := read(t, ctx, chromedp.Text(`[data-testid="consent-client"]`)); who != "Browser client" {
		t.Fatalf("the page names %q", who)
	}
	screenshot(t, ctx, "oauth-consent")
	for _, v := range axeViolations(t, ctx) {
		t.Errorf("axe %s (%s): %s\n    %s", v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n    "))
	}
	run(t, ctx, "approve",
		chromedp.SendKeys(`#handle`, "browsed"),
		chromedp.Click(`[data-testid="consent-approve"]`),
		chromedp.WaitVisible(`#done`),
	)
	loc, err := url.Parse(read(t, ctx, chromedp.Location()))
	if err != nil || !strings.HasPrefix(loc.String(), redirect) || loc.Query().Get("code") == "" || loc.Query().Get("state") != "b1" || loc.Query().Get("iss") != base {
		t.Fatalf("the client got %s; want its redirect_uri with code, state and iss", loc)
	}
	tokens, err := forum.ListTokens(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var granted *services.TokenInfo
	for _, tok := range tokens {
		if tok.Identity == "ainotes:browsed" {
			granted = &tok
		}
	}
	// The form starts with read and write checked; lock, asked for, is
	// the human's to add.
	if granted == nil || len(granted.Rights) != 2 || *granted.Owner != "human:ada" {
		t.Fatalf("the grant: %+v", granted)
	}
}
