package web_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"parley/migrations/dbtest"
)

// TestGuardInTheBrowser is the guard profile as a human meets it, on a
// phone (390 px) and on a desktop (1280 px): a thread the guard paused
// says so and resumes with one click; the Overdue page lists the questions
// nobody answered in time, oldest first, with who failed to answer.
func TestGuardInTheBrowser(t *testing.T) {
	for _, width := range []int64{390, 1280} {
		t.Run(strconv.FormatInt(width, 10)+"px", func(t *testing.T) {
			ctx := browser(t)
			clk := &movable{t: time.Now().UTC().Truncate(time.Second)}
			a := startServer(t, dbtest.Fresh(t, "sqlite"), guardConfig(clk))
			a.humanToken("ada")
			alice, bob := a.token("alice"), a.token("bob")
			th := pausedThread(a, alice, bob)
			at := func(d time.Duration) string { return clk.now().Add(d).Format(time.RFC3339) }
			a.post(alice, map[string]any{"kind": "ask", "to": map[string]any{"identity": "ainotes:bob"}, "reply_by": at(time.Hour),
				"body": "Is the mirror in sync with production? The release waits for it."})
			a.post(bob, map[string]any{"kind": "ask", "reply_by": at(2 * time.Hour), "body": "Who reviews the cache PR before Friday?"})
			clk.advance(3 * time.Hour)
			w := strconv.FormatInt(width, 10)

			run(t, ctx, "sign in",
				chromedp.EmulateViewport(width, 844),
				chromedp.Navigate(a.base+"/threads/"+th),
				chromedp.WaitVisible(`[data-testid="signin-form"]`),
				chromedp.SendKeys(`#name`, "ada"),
				chromedp.SendKeys(`#password`, "correct horse battery"),
				chromedp.Submit(`[data-testid="signin-form"]`),
				chromedp.WaitVisible(`[data-testid="guard-paused"]`),
			)
			screenshot(t, ctx, "guard-paused-"+w)
			run(t, ctx, "resume",
				chromedp.Click(`[data-testid="resume"]`),
				chromedp.WaitVisible(`[data-testid="done"]`),
				chromedp.WaitNotPresent(`[data-testid="guard-paused"]`),
				chromedp.WaitVisible(`//article[@data-kind="note"]//p[contains(., "Resumed by a human")]`),
			)
			got := a.ok(200, "GET", "/api/v1/threads/"+th, bob, nil)
			if got.get("thread", "guard") != "active" {
				t.Fatalf("still paused after the click: %s", got.raw)
			}

			run(t, ctx, "the overdue page",
				chromedp.Navigate(a.base+"/overdue"),
				chromedp.WaitVisible(`[data-testid="overdue"]`),
			)
			screenshot(t, ctx, "guard-overdue-"+w)
			first := read(t, ctx, chromedp.Text(`[data-testid="overdue"]:first-child`))
			if !strings.Contains(first, "ainotes:bob did not answer") || !strings.Contains(first, "mirror") {
				t.Fatalf("first overdue item %q", first)
			}
			run(t, ctx, "open it",
				chromedp.Click(`[data-testid="overdue"]:first-child a.title`),
				chromedp.WaitVisible(`[data-testid="guard-overdue"]`),
			)
			screenshot(t, ctx, "guard-overdue-thread-"+w)
			scroll, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`))
			if err != nil || scroll {
				t.Fatalf("horizontal scroll at %d px (%v)", width, err)
			}
		})
	}
}
