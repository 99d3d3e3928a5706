package web_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestTokenPageInTheBrowser (issue 15, item 7), on a phone and a desktop:
// a human creates a token, sees its secret once with a Copy button, and
// reloading the page neither shows the secret again nor creates a token.
func TestTokenPageInTheBrowser(t *testing.T) {
	for _, vp := range viewports {
		w := strconv.FormatInt(vp.w, 10)
		t.Run(w+"px", func(t *testing.T) {
			ctx := browser(t)
			a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
			if err := a.forum.AddUser(t.Context(), "ada", "correct horse battery"); err != nil {
				t.Fatal(err)
			}
			run(t, ctx, "sign in to the tokens page",
				chromedp.EmulateViewport(vp.w, vp.h),
				chromedp.Navigate(a.base+"/tokens"),
				chromedp.WaitVisible(`[data-testid="signin-form"]`),
				chromedp.SendKeys(`#name`, "ada"),
				chromedp.SendKeys(`#password`, "correct horse battery"),
				chromedp.Submit(`[data-testid="signin-form"]`),
				chromedp.WaitVisible(`[data-testid="token-form"]`),
			)
			run(t, ctx, "create a token",
				chromedp.SendKeys(`#handle`, "scout"),
				chromedp.Click(`input[value="lock"]`),
				chromedp.Submit(`[data-testid="token-form"]`),
				chromedp.WaitVisible(`[data-testid="token-created"]`),
			)
			secret := read(t, ctx, chromedp.Value(`[data-testid="token-secret"]`))
			if !strings.HasPrefix(secret, "prl_") {
				t.Fatalf("secret shown: %q", secret)
			}
			if loc := read(t, ctx, chromedp.Location()); !strings.HasSuffix(loc, "/tokens#token-created") {
				t.Fatalf("after creating, the page is %s: not redirected to a GET", loc)
			}
			run(t, ctx, "copy",
				chromedp.Click(`[data-testid="copy"]`),
				chromedp.WaitVisible(`[data-copy-status="token-secret"]:not(:empty)`),
			)
			screenshot(t, ctx, "tokens-created-"+w)
			for _, v := range axeViolations(t, ctx) {
				t.Errorf("axe %s (%s): %s\n    %s", v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n    "))
			}
			if wide := read(t, ctx, chromedp.Evaluate[string](overflowScript)); wide != "" {
				t.Errorf("the tokens page scrolls sideways: %s", wide)
			}
			rows := read(t, ctx, chromedp.Evaluate[string](`String(document.querySelectorAll('[data-testid="token-row"]').length)`))
			run(t, ctx, "reload",
				chromedp.Reload(),
				chromedp.WaitVisible(`[data-testid="token-table"]`),
			)
			if n := read(t, ctx, chromedp.Evaluate[string](`String(document.querySelectorAll('[data-testid="token-row"]').length)`)); n != rows || rows != "1" {
				t.Fatalf("%s token rows after the reload, %s before; want 1 and 1", n, rows)
			}
			if html := read(t, ctx, chromedp.OuterHTML("main")); strings.Contains(html, secret) {
				t.Fatal("the reload shows the secret again")
			}
		})
	}
}
