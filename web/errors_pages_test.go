package web_test

import (
	"net/http"
	"net/http/cookiejar"
	"testing"

	"parley/migrations/dbtest"
	"parley/services"
	"parley/views/components"
)

// TestProblemPages: a missing page and a refusal speak plainly first, with
// the protocol's reason in small print; both keep the navigation of a
// signed-in human and offer a way on, also to someone signed out.
func TestProblemPages(t *testing.T) {
	a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	jar, _ := cookiejar.New(nil)
	out := &browserless{t: t, a: a, http: &http.Client{Jar: jar}}
	missing := out.page("GET", "/no/such/page", nil, 404)
	if missing.Find(`[data-testid="identity"]`).Length() != 0 || missing.Find(`[data-testid="way-on"] a[href="/signin"]`).Length() != 1 {
		t.Fatal("a missing page, signed out, must offer sign-in")
	}

	in := signedIn(t, a)
	for _, tc := range []struct {
		path   string
		status int
		reason services.Reason // "" for a missing page
	}{
		{"/no/such/page", 404, ""},
		{"/threads/th_999999", 404, services.ThreadNotFound},
		{"/claims/cl_999999", 404, services.ClaimNotFound},
	} {
		doc := in.page("GET", tc.path, nil, tc.status)
		if doc.Find(`[data-testid="identity"]`).Text() != "human:ada" || doc.Find(`[data-testid="way-on"] a[href="/threads"]`).Length() != 1 {
			t.Errorf("%s: no navigation or way on", tc.path)
		}
		if tc.reason == "" {
			continue
		}
		refusal := doc.Find(`[data-testid="refusal"]`)
		if got := refusal.Find(`[data-testid="plain"]`).Text(); got != components.Plain(tc.reason) {
			t.Errorf("%s: plain sentence %q, want %q", tc.path, got, components.Plain(tc.reason))
		}
		if got := refusal.Find(`small.reason code`).Text(); got != string(tc.reason) {
			t.Errorf("%s: reason in small print %q, want %s", tc.path, got, tc.reason)
		}
		if refusal.Children().First().Is(`[data-testid="plain"]`) == false {
			t.Errorf("%s: the plain sentence must come first", tc.path)
		}
	}
}
