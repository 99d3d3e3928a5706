package oauth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// TestPublicAddr: metadata documents come from public addresses only.
func TestPublicAddr(t *testing.T) {
	for addr, public := range map[string]bool{
		"93.184.216.34": true, "2606:2800:220:1::1": true,
		"127.0.0.1": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "100.64.0.1": false, "0.0.0.0": false, "fd00::1": false, "fe80::1": false,
		"::ffff:127.0.0.1": false, "224.0.0.1": false,
	} {
		if got := publicAddr(netip.MustParseAddr(addr)); got != public {
			t.Errorf("publicAddr(%s) = %v, want %v", addr, got, public)
		}
	}
}

// TestFetchMetadata: a Client ID Metadata Document is read within its
// limits and must name itself; the dialer refuses loopback unless allowed.
func TestFetchMetadata(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	doc := func(id string, extra map[string]any) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			m := map[string]any{"client_id": id, "client_name": "Test", "redirect_uris": []string{"http://127.0.0.1/cb"}}
			for k, v := range extra {
				m[k] = v
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(m)
		}
	}
	mux.HandleFunc("/good.json", doc(srv.URL+"/good.json", nil))
	mux.HandleFunc("/other.json", doc(srv.URL+"/someone-else.json", nil))
	mux.HandleFunc("/secret.json", doc(srv.URL+"/secret.json", map[string]any{"token_endpoint_auth_method": "client_secret_basic"}))
	mux.HandleFunc("/none.json", doc(srv.URL+"/none.json", map[string]any{"redirect_uris": []string{}}))
	mux.HandleFunc("/huge.json", doc(srv.URL+"/huge.json", map[string]any{"padding": strings.Repeat("x", MetadataMaxBytes)}))
	mux.HandleFunc("/text.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("{}"))
	})
	mux.HandleFunc("/moved.json", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/good.json", http.StatusFound) })
	tr := srv.Client().Transport.(*http.Transport)
	allowed := &Server{fetch: fetcher(tr, true)}
	for _, tc := range []struct{ path, fails string }{
		{"/good.json", ""},
		{"/other.json", "not its own URL"},
		{"/secret.json", "only public clients"},
		{"/none.json", "no redirect_uris"},
		{"/huge.json", "larger than"},
		{"/text.json", "not application/json"},
		{"/moved.json", "not redirected"},
		{"/missing.json", "404"},
	} {
		_, err := allowed.fetchMetadata(context.Background(), srv.URL+tc.path)
		if (tc.fails == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.fails)) {
			t.Errorf("%s: %v; want %q", tc.path, err, tc.fails)
		}
	}
	guarded := &Server{fetch: fetcher(tr, false)}
	if _, err := guarded.fetchMetadata(context.Background(), srv.URL+"/good.json"); err == nil || !strings.Contains(err.Error(), "not a public address") {
		t.Errorf("loopback without leave: %v", err)
	}
	for id, ok := range map[string]bool{"https://a.example/c.json": true, "https://a.example/": false, "https://a.example": false,
		"http://a.example/c.json": false, "https://u@a.example/c.json": false, "desk-app": false} {
		if isMetadataURL(id) != ok {
			t.Errorf("isMetadataURL(%q) = %v", id, !ok)
		}
	}
}
