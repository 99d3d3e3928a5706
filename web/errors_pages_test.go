package web_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"testing"
	"time"

	"parley/migrations/dbtest"
	"parley/services"
	"parley/views/components"
	"parley/web"

	"gorm.io/gorm"
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

// TestSignInPastItsDeadline: a sign-in whose request deadline has passed
// (here a deadline of 1 ns, so that it always has) is refused 503
// unavailable on a page that renders, with the reason in small print.
// The page failed to render under the passed deadline, and the answer was
// a bare 500.
func TestSignInPastItsDeadline(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		a := startServerWith(t, db, services.Config{}, web.Options{RequestTimeout: time.Nanosecond})
		if err := a.forum.AddUser(t.Context(), "ada", "correct horse battery"); err != nil {
			t.Fatal(err)
		}
		const csrf = "0000000000000000000000000000000000000000000000000000000000000000"
		jar, _ := cookiejar.New(nil)
		base, _ := url.Parse(a.base)
		jar.SetCookies(base, []*http.Cookie{{Name: "parley_form", Value: csrf}})
		b := &browserless{t: t, a: a, http: &http.Client{Jar: jar}}
		doc := b.page("POST", "/signin", url.Values{"_csrf": {csrf}, "name": {"ada"}, "password": {"correct horse battery"}}, http.StatusServiceUnavailable)
		refusal := doc.Find(`[data-testid="refusal"]`)
		if reason, _ := refusal.Attr("data-reason"); reason != string(services.Unavailable) {
			t.Fatalf("refusal %q, want %s: %s", reason, services.Unavailable, doc.Text())
		}
		if got := refusal.Find(`[data-testid="plain"]`).Text(); got != components.Plain(services.Unavailable) {
			t.Errorf("plain sentence %q", got)
		}
	})
}
