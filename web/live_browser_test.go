package web_test

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestLivePageKeepsWhatThePersonIsDoing: a moderator has half typed a reply
// and picked, without sending, another state in the re-mark choice, which
// has the focus. An agent posts over the API: the new message appears —
// the page learns of it from the /live stream; it does not poll — and the
// typed text, the choice, the focus and the scroll position are as they
// were (issue 15, item 9), on a phone and on a desktop. The
// reply form opens on note (item 1) and says what another act would do.
func TestLivePageKeepsWhatThePersonIsDoing(t *testing.T) {
	for _, size := range widths {
		t.Run(strconv.FormatInt(size.w, 10)+"px", func(t *testing.T) {
			livePageKeeps(t, size.w, size.h)
		})
	}
}

func livePageKeeps(t *testing.T, w, h int64) {
	ctx := browser(t)
	a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	if err := a.forum.AddUser(context.Background(), "ada", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	alice, bob := a.token("alice"), a.token("bob")
	th := a.post(alice, map[string]any{"kind": "ask", "body": "Which port should linkd listen on?"}).str("thread", "id")
	a.post(bob, map[string]any{"kind": "answer", "thread": th, "body": "8443."})

	run(t, ctx, "sign in and open the thread",
		chromedp.EmulateViewport(w, h),
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
	if kind := read(t, ctx, chromedp.Value(`#reply-kind`)); kind != "note" {
		t.Fatalf("the reply form opens on %q, want note", kind)
	}
	if trigger := attr(t, ctx, `[data-testid="thread-live"]`, "hx-trigger"); strings.Contains(trigger, "every") {
		t.Fatalf("the thread page polls: hx-trigger %q", trigger)
	}
	run(t, ctx, "the page's stream is open", chromedp.WaitReady(`body[data-live-open]`))
	before := scrollY(t, ctx)
	a.post(bob, map[string]any{"kind": "note", "thread": th, "body": "Arrived live from the API."})
	run(t, ctx, "the new message arrives live",
		chromedp.WaitVisible(`//article//p[contains(., "Arrived live from the API.")]`),
	)
	typed := read(t, ctx, chromedp.Value(`#reply-body`))
	choice := read(t, ctx, chromedp.Value(`[data-testid="remark-state"]`))
	focus := read(t, ctx, chromedp.Evaluate[string](`document.activeElement.getAttribute("data-testid") || document.activeElement.id`))
	if typed != "Half a thought about the" || choice != "deferred" || focus != "remark-state" {
		t.Fatalf("after the live update: reply %q, re-mark choice %q, focus on %q", typed, choice, focus)
	}
	if after := scrollY(t, ctx); math.Abs(after-before) > 50 {
		t.Fatalf("the live update moved the page from %.0f to %.0f", before, after)
	}
	screenshot(t, ctx, "live-update-"+strconv.FormatInt(w, 10))

	// The reply form says what another act would do before it is sent.
	run(t, ctx, "choose answer",
		chromedp.SetValue(`#reply-kind`, "answer"),
	)
	read(t, ctx, chromedp.Evaluate[string](`document.getElementById("reply-kind").dispatchEvent(new Event("change", {bubbles: true})) ? "sent" : "cancelled"`))
	if effect := read(t, ctx, chromedp.Text(`[data-testid="act-effect"]`)); !strings.Contains(effect, "ives the turn to ainotes:alice") {
		t.Fatalf("after choosing answer the form says %q", effect)
	}
}
