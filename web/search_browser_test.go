package web_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestSearchInTheBrowser: on a phone (390 px) and on a desktop (1280 px),
// a human types words into the navigation's search box, reads the hits
// with their matches marked, narrows them by kind (the URL keeps every
// filter), and follows a hit to its message in its thread.
func TestSearchInTheBrowser(t *testing.T) {
	for _, width := range []int64{390, 1280} {
		t.Run(strconv.FormatInt(width, 10)+"px", func(t *testing.T) {
			ctx := browser(t)
			a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
			if err := a.forum.AddUser(t.Context(), "ada", "correct horse battery"); err != nil {
				t.Fatal(err)
			}
			alice, bob := a.token("alice"), a.token("bob")
			th := a.post(alice, map[string]any{"kind": "ask", "body": "Which port should linkd listen on in staging?"}).str("thread", "id")
			answer := a.post(bob, map[string]any{"kind": "answer", "thread": th,
				"body": "Port 8443: 443 belongs to the proxy, and <b>linkd.conf</b> already names 8443 for staging."}).str("message", "id")
			a.post(alice, map[string]any{"kind": "ask", "body": "Does the proxy need a restart after a port change?"})

			run(t, ctx, "sign in",
				chromedp.EmulateViewport(width, 844),
				chromedp.Navigate(a.base+"/threads"),
				chromedp.WaitVisible(`[data-testid="signin-form"]`),
				chromedp.SendKeys(`#name`, "ada"),
				chromedp.SendKeys(`#password`, "correct horse battery"),
				chromedp.Submit(`[data-testid="signin-form"]`),
				chromedp.WaitVisible(`[data-testid="thread-row"]`),
			)
			if width < 600 {
				// On a phone the navigation's box folds into a link to
				// the search page, whose box is the one box.
				run(t, ctx, "search from the navigation",
					chromedp.Click(`[data-testid="nav-search-link"]`),
					chromedp.WaitVisible(`#q`),
					chromedp.SendKeys(`#q`, "port proxy\n"),
					chromedp.WaitVisible(`[data-testid="hit"]`),
				)
			} else {
				run(t, ctx, "search from the navigation",
					chromedp.SendKeys(`#nav-q`, "port proxy\n"),
					chromedp.WaitVisible(`[data-testid="hit"]`),
				)
			}
			if n := read(t, ctx, chromedp.Evaluate[string](`String(document.querySelectorAll('[data-testid="hit"]').length)`)); n != "2" {
				t.Fatalf("%s hits, want 2", n)
			}
			marks := read(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-message="`+answer+`"] mark')].map(m => m.textContent).join("|")`))
			if marks != "Port|proxy" {
				t.Fatalf("marked %q, want Port|proxy", marks)
			}
			if text := read(t, ctx, chromedp.Text(`[data-message="`+answer+`"] [data-testid="snippet"]`)); !strings.Contains(text, "<b>linkd.conf</b>") {
				t.Fatalf("the body's markup must show as text: %q", text)
			}
			screenshot(t, ctx, "search-"+strconv.FormatInt(width, 10))

			// The answer's hit is already on this page: mark the page, so
			// as to wait for the narrowed one itself.
			read(t, ctx, chromedp.Evaluate[string](`document.body.dataset.before = "1"`))
			run(t, ctx, "narrow to answers",
				chromedp.Click(`.filters summary`),
				chromedp.WaitVisible(`#kind`),
				chromedp.SetValue(`#kind`, "answer"),
				chromedp.Submit(`[data-testid="search-form"]`),
				chromedp.WaitNotPresent(`body[data-before]`),
				chromedp.WaitVisible(`[data-testid="hit"][data-message="`+answer+`"]`),
			)
			loc := read(t, ctx, chromedp.Location())
			if !strings.Contains(loc, "kind=answer") || !strings.Contains(loc, "q=port+proxy") {
				t.Fatalf("the URL does not keep the filters: %s", loc)
			}
			if n := read(t, ctx, chromedp.Evaluate[string](`String(document.querySelectorAll('[data-testid="hit"]').length)`)); n != "1" {
				t.Fatalf("%s hits after narrowing, want 1", n)
			}
			if w := read(t, ctx, chromedp.Evaluate[string](`String(document.documentElement.scrollWidth <= window.innerWidth)`)); w != "true" {
				t.Fatal("the search page scrolls sideways")
			}
			if open := read(t, ctx, chromedp.Evaluate[string](`String(document.querySelector(".filters").open)`)); open != "true" {
				t.Fatal("a filter in use must show")
			}
			screenshot(t, ctx, "search-filtered-"+strconv.FormatInt(width, 10))
			run(t, ctx, "follow the hit",
				chromedp.Click(`[data-message="`+answer+`"] a.title`),
				chromedp.WaitVisible(`article#`+answer),
			)
		})
	}
}
