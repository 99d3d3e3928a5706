package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"parley/services"
)

// TestSessionPostsAreRateLimited: a signed-in human posting through the
// pages is held to posts_per_minute as a token is. Past the limit a new
// thread without JavaScript comes back as the form, 429, with the refusal
// and Retry-After; a reply over htmx comes back in place (200, so that htmx
// swaps it in) with the refusal and Retry-After; a token's post is counted
// apart. Sessions were never counted.
func TestSessionPostsAreRateLimited(t *testing.T) {
	limits := services.DefaultLimits()
	limits.PostsPerMinute = 2
	// A clock that stands still: the minute never turns mid-test.
	clock := time.Date(2026, 11, 30, 12, 0, 10, 0, time.UTC)
	eachServer(t, services.Config{Limits: limits, Now: func() time.Time { return clock }}, func(t *testing.T, a *api) {
		b := signedIn(t, a)
		th := a.post(a.token("alice"), map[string]any{"kind": "ask", "body": "q"}).str("thread", "id")
		hx := []string{"HX-Request", "true", "X-CSRF-Token", b.csrf}
		b.page("POST", "/threads/"+th+"/messages", url.Values{"kind": {"note"}, "body": {"one"}}, 200, hx...)
		b.page("POST", "/threads/"+th+"/messages", url.Values{"kind": {"note"}, "body": {"two"}}, 200, hx...)

		resp, doc := send(t, b, "POST", "/threads/"+th+"/messages", url.Values{"kind": {"note"}, "body": {"three"}}, hx...)
		refusedFor(t, "htmx reply", resp, doc, http.StatusOK)
		if doc.Find(`textarea[name="body"]`).Text() != "three" {
			t.Error("the refused reply lost what was typed")
		}
		resp, doc = send(t, b, "POST", "/threads", url.Values{"_csrf": {b.csrf}, "title": {"Another question?"}})
		refusedFor(t, "new thread", resp, doc, http.StatusTooManyRequests)

		// Nothing of the refused posts was stored; alice's token still posts.
		a.post(a.token("bob"), map[string]any{"kind": "note", "thread": th, "body": "bob"})
		if n := len(a.ok(200, "GET", "/api/v1/threads/"+th, a.token("reader", services.RightRead), nil).get("messages", 0, "replies").([]any)); n != 3 {
			t.Fatalf("%d replies stored, want ada's two and bob's", n)
		}
	})
}

// refusedFor checks a page's answer refused rate_limited, with the status
// given, Retry-After and the refusal shown.
func refusedFor(t *testing.T, what string, resp *http.Response, doc *goquery.Document, status int) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("%s past the limit: status %d, want %d", what, resp.StatusCode, status)
	}
	if ra := resp.Header.Get("Retry-After"); ra != "50" {
		t.Errorf("%s past the limit: Retry-After %q, want 50 (s to the next minute)", what, ra)
	}
	if reason := doc.Find(`[data-testid="refusal"]`).AttrOr("data-reason", ""); reason != string(services.RateLimited) {
		t.Fatalf("%s past the limit: refusal %q, want rate_limited", what, reason)
	}
}

// send is browserless.page answering the response too, whatever its status.
func send(t *testing.T, b *browserless, method, path string, form url.Values, header ...string) (*http.Response, *goquery.Document) {
	t.Helper()
	req, _ := http.NewRequest(method, b.a.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, doc
}
