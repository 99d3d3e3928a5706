package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestSignedOutPageSaysSo: a page is open when its session signs out
// elsewhere (here a sign-out request from the page's own script, as another
// tab would send it): within a heartbeat the page's /live stream ends with
// signed-out, and the page shows its signed-out notice, with a link that
// signs in back to it, and stops listening; what was typed stays (issue 23,
// item 3).
func TestSignedOutPageSaysSo(t *testing.T) {
	ctx := browser(t)
	a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{Heartbeat: 100 * time.Millisecond})
	if err := a.forum.AddUser(context.Background(), "ada", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	signInAt(t, ctx, a, 1280, 900, "/threads/new", `body[data-live-open]`)
	run(t, ctx, "type, then sign out elsewhere",
		chromedp.SendKeys(`textarea`, "Half a question"),
		chromedp.Evaluate[chromedp.Void](`fetch("/signout", {method: "POST", headers: JSON.parse(document.body.getAttribute("hx-headers"))}); undefined`),
		chromedp.WaitVisible(`[data-testid="signed-out"]`),
		until(`document.body.hasAttribute("data-signed-out") && !document.body.hasAttribute("data-live-open")`),
	)
	href := attr(t, ctx, `[data-testid="signed-out"] a`, "href")
	if !strings.HasSuffix(href, "/signin?next=%2Fthreads%2Fnew") {
		t.Fatalf("the notice's link: %q", href)
	}
	if typed := read(t, ctx, chromedp.Value(`textarea`)); typed != "Half a question" {
		t.Fatalf("the typed text after sign-out: %q", typed)
	}
	screenshot(t, ctx, "signed-out")
}
