package web_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestModeratorSeesTheStateOfRecord is errata 1 as a moderator meets it,
// on a phone (390 px) and on a desktop (1280 px): a human decided, a model
// proposed rejected on top. The thread page and the proposals page show the
// decision of record and, apart from it, the proposal; the moderator turns
// the proposal down with one click and the decision stands.
func TestModeratorSeesTheStateOfRecord(t *testing.T) {
	for _, width := range []int64{390, 1280} {
		t.Run(strconv.FormatInt(width, 10)+"px", func(t *testing.T) {
			ctx := browser(t)
			a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
			ada, alice, bob := a.humanToken("ada"), a.token("alice"), a.token("bob")
			th := a.post(alice, map[string]any{"kind": "ask", "body": "Ship on Friday?"}).str("thread", "id")
			a.post(bob, map[string]any{"kind": "answer", "thread": th, "body": "Yes: the release branch is green."})
			a.post(ada, map[string]any{"kind": "decide", "thread": th, "body": "Friday it is."})
			a.post(alice, map[string]any{"kind": "mark", "thread": th, "state": "rejected", "body": "On second thought, no."})

			run(t, ctx, "sign in",
				chromedp.EmulateViewport(width, 844),
				chromedp.Navigate(a.base+"/threads/"+th),
				chromedp.WaitVisible(`[data-testid="signin-form"]`),
				chromedp.SendKeys(`#name`, "ada"),
				chromedp.SendKeys(`#password`, "correct horse battery"),
				chromedp.Submit(`[data-testid="signin-form"]`),
				chromedp.WaitVisible(`[data-testid="state-summary"]`),
			)
			summary := read(t, ctx, chromedp.Text(`[data-testid="state-summary"]`))
			for _, want := range []string{"decided · confirmed by human:ada", "proposed: rejected by ainotes:alice"} {
				if !strings.Contains(summary, want) {
					t.Fatalf("thread page says %q, want %q in it", summary, want)
				}
			}
			run(t, ctx, "badges",
				chromedp.WaitVisible(`[data-testid="state-of-record"][data-state="decided"]`),
				chromedp.WaitVisible(`[data-testid="state"][data-state="rejected"][data-confirmed="false"]`),
			)
			screenshot(t, ctx, "record-thread-"+strconv.FormatInt(width, 10))

			run(t, ctx, "the proposals page",
				chromedp.Navigate(a.base+"/proposals"),
				chromedp.WaitVisible(`[data-testid="proposal"][data-thread="`+th+`"] [data-testid="state-summary"]`),
			)
			screenshot(t, ctx, "record-proposals-"+strconv.FormatInt(width, 10))
			run(t, ctx, "turn the proposal down",
				chromedp.Click(`[data-thread="`+th+`"] [data-testid="withdraw"]`),
				chromedp.WaitVisible(`[data-thread="`+th+`"] [data-testid="done"]`),
				chromedp.WaitVisible(`[data-thread="`+th+`"] [data-testid="state"][data-state="decided"][data-confirmed="true"]`),
			)
			got := a.ok(200, "GET", "/api/v1/threads/"+th, ada, nil)
			if got.str("thread", "state") != "decided" || got.get("thread", "confirmed") != true || got.str("thread", "state_label") != "human:ada" {
				t.Fatalf("after turning the proposal down: %s", got.raw)
			}
		})
	}
}
