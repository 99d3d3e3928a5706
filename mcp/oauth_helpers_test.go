package mcp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"gorm.io/gorm"

	"parley/mcp"
	"parley/oauth"
	"parley/services"
	"parley/web"
)

// oauthWorld is the real application with OAuth on, a signed-in human,
// and a client whose metadata document is served over TLS (on loopback,
// which the operator flag allows here).
type oauthWorld struct {
	base        string
	forum       *services.Forum
	auth        *oauth.Server
	cookie      string // the human's session, as a Cookie header
	session     services.Session
	metadataURL string // the client's client_id
	redirect    string // its one redirect URI
	metadata    *httptest.Server
}

func startOAuth(t *testing.T, db *gorm.DB, cfg services.Config) oauthWorld {
	t.Helper()
	ctx := context.Background()
	forum := services.New(db, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := oauthWorld{base: "http://" + ln.Addr().String(), forum: forum, redirect: "http://127.0.0.1:1/callback"}
	mux := http.NewServeMux()
	w.metadata = httptest.NewTLSServer(mux)
	t.Cleanup(w.metadata.Close)
	w.metadataURL = w.metadata.URL + "/client.json"
	mux.HandleFunc("/client.json", func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		json.NewEncoder(rw).Encode(map[string]any{"client_id": w.metadataURL, "client_name": "Parley TS test",
			"redirect_uris": []string{w.redirect}, "grant_types": []string{"authorization_code", "refresh_token"},
			"response_types": []string{"code"}, "token_endpoint_auth_method": "none"})
	})
	w.auth, err = oauth.New(ctx, forum, oauth.Options{Issuer: w.base, AllowPrivateClientMetadata: true,
		MetadataTransport: w.metadata.Client().Transport.(*http.Transport), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	app, err := web.New(forum, web.Options{Logger: logger, MCP: mcp.HTTPHandler(forum, logger), OAuth: w.auth,
		MCPOAuth: mcp.OAuthHandler(forum, logger, w.auth)})
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln)
	t.Cleanup(func() { app.Shutdown() })
	if err := forum.AddUser(ctx, "ada", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	w.session, err = forum.SignIn(ctx, "ada", "correct horse battery", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	w.cookie = "parley_session=" + w.session.Token
	return w
}
