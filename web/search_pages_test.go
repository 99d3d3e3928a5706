package web_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"parley/services"
)

// TestSearchPage: a human searches from the navigation; matches are
// marked in text-only snippets, the filters stay in the URL and in the
// form, the next page keeps them, and a refused search is told beside the
// form.
func TestSearchPage(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		b := signedIn(t, a)
		alice, bob := a.token("alice"), a.token("bob")
		th := a.post(alice, map[string]any{"kind": "ask", "body": "Which port should <b>linkd</b> use?"}).str("thread", "id")
		answer := a.post(bob, map[string]any{"kind": "answer", "thread": th, "body": "Port 8443 — «443» belongs to the proxy."}).str("message", "id")
		for i := range 3 {
			// Numbered: one party's words repeated across threads are
			// refused (§14 rule 1, errata 2).
			a.post(bob, map[string]any{"kind": "ask", "body": fmt.Sprintf("Another port question, number %d", i+1)})
		}

		if form := b.page("GET", "/threads", nil, 200).Find(`[data-testid="nav-search"]`); form.AttrOr("action", "") != "/search" {
			t.Fatal("the navigation has no search box")
		}
		doc := b.page("GET", "/search?q=port&kind=answer&author=ainotes:bob", nil, 200)
		hits := doc.Find(`[data-testid="hit"]`)
		if hits.Length() != 1 || hits.AttrOr("data-message", "") != answer {
			t.Fatalf("%d hits", hits.Length())
		}
		snippet := hits.Find(`[data-testid="snippet"]`)
		if html, _ := snippet.Html(); !strings.Contains(html, "<mark>Port</mark> 8443 — ‹443› belongs") {
			t.Fatalf("snippet %q", html)
		}
		if href := hits.Find("a.title").AttrOr("href", ""); href != "/threads/"+th+"#"+answer {
			t.Fatalf("hit links to %q", href)
		}
		if title, _ := hits.Find("a.title").Html(); !strings.Contains(title, "&lt;b&gt;linkd&lt;/b&gt;") {
			t.Fatalf("a title's markup must show as text: %q", title)
		}
		// One box: the search page's own; the navigation's gives way to it.
		if doc.Find("#nav-q").Length() != 0 {
			t.Error("the search page shows the navigation's box too")
		}
		for field, want := range map[string]string{"#q": "port", "#author": "ainotes:bob"} {
			if got := doc.Find(field).AttrOr("value", ""); got != want {
				t.Errorf("%s holds %q, want %q", field, got, want)
			}
		}
		if doc.Find(`#kind option[selected]`).AttrOr("value", "") != "answer" {
			t.Error("the kind filter is not kept")
		}

		first := b.page("GET", "/search?q=port&limit=2&state=open", nil, 200)
		next := first.Find(`[data-testid="next-page"]`).AttrOr("href", "")
		u, _ := url.Parse(next)
		if u.Path != "/search" || u.Query().Get("q") != "port" || u.Query().Get("state") != "open" || u.Query().Get("cursor") == "" {
			t.Fatalf("next page %q", next)
		}
		var ids []string
		for _, d := range []string{"/search?q=port&limit=2&state=open", next} {
			b.page("GET", d, nil, 200).Find(`[data-testid="hit"]`).Each(func(_ int, s *goquery.Selection) {
				ids = append(ids, s.AttrOr("data-message", ""))
			})
		}
		if len(ids) != 3 || ids[0] == ids[2] || ids[1] == ids[2] {
			t.Fatalf("two pages of the three open threads' questions: %v", ids)
		}

		refused := b.page("GET", "/search?q=port&thread=nope", nil, 400)
		if refused.Find(`[data-testid="refusal"]`).AttrOr("data-reason", "") != "invalid_body" || refused.Find("#q").AttrOr("value", "") != "port" {
			t.Fatal("a refused search shows its reason beside the form, which keeps q")
		}
		if empty := b.page("GET", "/search", nil, 200); empty.Find(`[data-testid="hits"]`).Length() != 0 || empty.Find(`[data-testid="search-form"]`).Length() != 1 {
			t.Fatal("without q the page is the form alone")
		}
	})
}
