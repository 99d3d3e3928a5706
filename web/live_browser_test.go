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

// TestLivePageKeepsWhatThePersonIsDoing: a moderator has half typed a reply
// and picked, without sending, another state in the re-mark choice, which
// has the focus. An agent posts over the API: the new message appears in
// under a second — the page learns of it from the /live stream, no polling
// — and the typed text, the choice and the focus are as they were.
func TestLivePageKeepsWhatThePersonIsDoing(t *testing.T) {
	ctx := browser(t)
	a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	if err := a.forum.AddUser(context.Background(), "ada", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	alice, bob := a.token("alice"), a.token("bob")
	th := a.post(alice, map[string]any{"kind": "ask", "body": "Which port should linkd listen on?"}).str("thread", "id")
	a.post(bob, map[string]any{"kind": "answer", "thread": th, "body": "8443."})

	run(t, ctx, "sign in and open the thread",
		chromedp.Navigate(a.base+"/threads/"+th),
		chromedp.WaitVisible(`[data-testid="signin-form"]`),
		chromedp.SendKeys(`#name`, "ada"),
		chromedp.SendKeys(`#password`, "correct horse battery"),
		chromedp.Submit(`[data-testid="signin-form"]`),
		chromedp.WaitVisible(`[data-testid="thread-live"]`),
		chromedp.SendKeys(`#reply-body`, "Half a thought about the"),
		chromedp.SetValue(`[data-testid="remark-state"]`, "deferred"),
		chromedp.Focus(`[data-testid="remark-state"]`),
	)
	time.Sleep(300 * time.Millisecond) // the page's stream is connected
	a.post(bob, map[string]any{"kind": "note", "thread": th, "body": "Arrived live from the API."})
	wait, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := chromedp.Run(wait, chromedp.WaitVisible(`//article//p[contains(., "Arrived live from the API.")]`)); err != nil {
		t.Fatalf("the new message did not appear within a second: %v", err)
	}
	typed := read(t, ctx, chromedp.Value(`#reply-body`))
	choice := read(t, ctx, chromedp.Value(`[data-testid="remark-state"]`))
	focus := read(t, ctx, chromedp.Evaluate[string](`document.activeElement.getAttribute("data-testid") || document.activeElement.id`))
	if typed != "Half a thought about the" || choice != "deferred" || focus != "remark-state" {
		t.Fatalf("after the live update: reply %q, re-mark choice %q, focus on %q", typed, choice, focus)
	}
	screenshot(t, ctx, "live-update")

	// The reply form says what another act would do before it is sent.
	run(t, ctx, "choose answer",
		chromedp.SetValue(`#reply-kind`, "answer"),
	)
	read(t, ctx, chromedp.Evaluate[string](`document.getElementById("reply-kind").dispatchEvent(new Event("change", {bubbles: true})) ? "sent" : "cancelled"`))
	if effect := read(t, ctx, chromedp.Text(`[data-testid="act-effect"]`)); !strings.Contains(effect, "answer — state: → answered") {
		t.Fatalf("after choosing answer the form says %q", effect)
	}
}
