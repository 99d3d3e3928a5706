package web_test

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"parley/migrations/dbtest"
	"parley/services"
	"parley/web"
)

// TestMetricsAccess: /metrics is absent unless turned on; then loopback
// (the default allow-list) scrapes it, a client that a trusted proxy
// names from outside the list is refused, and the token admits anyone.
func TestMetricsAccess(t *testing.T) {
	off := startServerWith(t, dbtest.Fresh(t, "sqlite"), services.Config{}, web.Options{})
	if r := off.do("GET", "/metrics", "", nil); r.status == 200 || strings.Contains(string(r.raw), "parley_") {
		t.Fatalf("/metrics without --metrics: %d %q", r.status, r.raw)
	}

	proxies, _ := web.ParseTrustedProxies("127.0.0.1")
	a := startServerWith(t, dbtest.Fresh(t, "sqlite"), services.Config{}, web.Options{TrustedProxies: proxies,
		Metrics: &web.MetricsOptions{Allow: web.DefaultMetricsAllow, Token: "scrape-secret"}})
	tests := []struct {
		name, forwarded, token string
		want                   int
	}{
		{"loopback", "", "", 200},
		{"loopback through the proxy", "127.0.0.1", "", 200},
		{"outside, through the proxy", "203.0.113.7", "", 403},
		{"outside, forged left of the proxy's entry", "127.0.0.1, 203.0.113.7", "", 403},
		{"outside with a wrong token", "203.0.113.7", "scrape-secreT", 403},
		{"outside with the token", "203.0.113.7", "scrape-secret", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", a.base+"/metrics", nil)
			if tt.forwarded != "" {
				req.Header.Set("X-Forwarded-For", tt.forwarded)
			}
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("%d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
	if got := web.DefaultMetricsAllow; !got[0].Contains(netip.MustParseAddr("127.0.0.1")) {
		t.Fatalf("default allow-list %v", got)
	}
}

// TestRequestIDs: every answer has an X-Request-Id that its log line
// repeats; a trusted proxy's sane id is kept, a client's or an insane one
// replaced.
func TestRequestIDs(t *testing.T) {
	proxies, _ := web.ParseTrustedProxies("127.0.0.1")
	behind := startServerWith(t, dbtest.Fresh(t, "sqlite"), services.Config{}, web.Options{TrustedProxies: proxies})
	direct := startServerWith(t, dbtest.Fresh(t, "sqlite"), services.Config{}, web.Options{})
	tests := []struct {
		name     string
		base     string
		incoming string
		kept     bool
	}{
		{"trusted proxy's id", behind.base, "lb-7f3a.91", true},
		{"trusted proxy's insane id", behind.base, "a b\"c", false},
		{"trusted proxy's overlong id", behind.base, strings.Repeat("x", 129), false},
		{"a client's id", direct.base, "lb-7f3a.91", false},
		{"none", direct.base, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", tt.base+"/healthz", nil)
			if tt.incoming != "" {
				req.Header.Set("X-Request-Id", tt.incoming)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			id := resp.Header.Get("X-Request-Id")
			if id == "" || (id == tt.incoming) != tt.kept {
				t.Fatalf("X-Request-Id %q for %q, kept want %v", id, tt.incoming, tt.kept)
			}
		})
	}
	r := behind.do("GET", "/api/v1/me", "", nil)
	id := r.header.Get("X-Request-Id")
	if !strings.Contains(behind.logs.String(), `"request_id":"`+id+`"`) || !strings.Contains(behind.logs.String(), `"reason":"token_missing"`) {
		t.Fatalf("no log line with request id %s and its reason:\n%s", id, behind.logs.String())
	}
}
