package web_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"parley/migrations/dbtest"
	"parley/services"
)

// box is where an element lies against the viewport.
type box struct {
	Top, Bottom, Inner, ScrollY float64
}

func (b box) inView() bool { return b.Top >= 0 && b.Bottom <= b.Inner }

func boxOf(t *testing.T, ctx context.Context, sel string) box {
	t.Helper()
	js := `(() => { const r = document.querySelector(` + strconv.Quote(sel) + `).getBoundingClientRect();
		return {Top: r.top, Bottom: r.bottom, Inner: window.innerHeight, ScrollY: window.scrollY}; })()`
	b, err := chromedp.Run(ctx, chromedp.Evaluate[box](js))
	if err != nil {
		t.Fatalf("%s: %v", sel, err)
	}
	return b
}

// choose picks a value in a select as a person does, with the focus on it:
// a live refresh that lands before the click then leaves the choice (the
// morph leaves the focused element's value, static/js/parley.js).
func choose(sel, value string) []chromedp.Action[chromedp.Void] {
	return []chromedp.Action[chromedp.Void]{chromedp.Focus(sel), chromedp.SetValue(sel, value)}
}

// TestModeratorSettlesAQueueOnAPhone is issue 15's "done when": a human
// moderator judges and settles a queue of three proposals one after the
// other — confirm, re-mark, turn down — without losing their place. Each
// card shows the proposing act and the record beneath; each outcome shows
// inside the viewport where the moderator acted, the page does not jump,
// the next card's buttons are already in view, and the navigation's
// pending count drops to nothing.
func TestModeratorSettlesAQueueOnAPhone(t *testing.T) {
	for _, size := range widths {
		t.Run(strconv.FormatInt(size.w, 10)+"px", func(t *testing.T) {
			ctx := browser(t)
			a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
			ada, alice, bob := a.humanToken("ada"), a.token("alice"), a.token("bob")
			// Oldest first: the queue lists the most recent on top.
			renamed := a.post(alice, map[string]any{"kind": "ask", "body": "Rename linkd to linkerd?"}).str("thread", "id")
			a.post(alice, map[string]any{"kind": "mark", "thread": renamed, "state": "rejected", "body": "Nobody wants the churn of a rename.\nThe docs would all break."})
			port := a.post(alice, map[string]any{"kind": "ask", "body": "Which port should linkd listen on?"}).str("thread", "id")
			a.post(bob, map[string]any{"kind": "answer", "thread": port, "body": "8443."})
			friday := a.post(alice, map[string]any{"kind": "ask", "body": "Ship on Friday?"}).str("thread", "id")
			answer := a.post(bob, map[string]any{"kind": "answer", "thread": friday, "body": "Yes: the release branch is green."}).str("message", "id")
			a.post(ada, map[string]any{"kind": "mark", "thread": friday, "state": "answered", "body": "The answer stands."})
			a.post(alice, map[string]any{"kind": "decide", "thread": friday, "parent": answer, "body": "Friday it is: tag at noon."})
			queue := []string{friday, port, renamed}

			signInAt(t, ctx, a, size.w, size.h, "/proposals", `[data-testid="proposal"]`)
			if n := read(t, ctx, chromedp.Text(`[data-testid="nav-pending"]`)); n != "(3)" {
				t.Fatalf("the navigation shows %q pending, want (3)", n)
			}
			card := `[data-testid="proposal"][data-thread="` + friday + `"]`
			if body := read(t, ctx, chromedp.Text(card+` [data-testid="act-body"]`)); body != "Friday it is: tag at noon." {
				t.Fatalf("the decide's text: %q", body)
			}
			parent := read(t, ctx, chromedp.Text(card+` [data-testid="act-parent"]`))
			if !strings.Contains(parent, "Accepts the answer by") || !strings.Contains(parent, "Yes: the release branch is green.") {
				t.Fatalf("the answer the decide accepts: %q", parent)
			}
			if record := read(t, ctx, chromedp.Text(card+` [data-testid="record-text"]`)); record != "answered · proposed by ainotes:bob, confirmed by human:ada" {
				t.Fatalf("the record beneath: %q", record)
			}
			if who := read(t, ctx, chromedp.Text(card+` [data-testid="proposed-by"]`)); !strings.Contains(who, "ainotes:alice") {
				t.Fatalf("proposed by %q", who)
			}
			mark := read(t, ctx, chromedp.Text(`[data-thread="`+renamed+`"] [data-testid="act-body"]`))
			if !strings.Contains(mark, "Nobody wants the churn") {
				t.Fatalf("the mark's reason: %q", mark)
			}
			screenshot(t, ctx, "proposals-queue-"+strconv.FormatInt(size.w, 10))

			steps := []struct {
				name, button, done string
				before             []chromedp.Action[chromedp.Void]
			}{
				{"confirm", "confirm", "Confirmed decided.", nil},
				{"re-mark", "remark", "Re-marked as deferred.", choose(`#remark-`+port, "deferred")},
				{"turn down", "withdraw", "Turned down the proposal rejected: the thread stays open.", nil},
			}
			for i, step := range steps {
				th := queue[i]
				sel := `[data-thread="` + th + `"]`
				button := sel + ` [data-testid="` + step.button + `"]`
				// The next card's button is in view, or a little further
				// down: the moderator never scrolls back up.
				if b := boxOf(t, ctx, button); b.Top < 0 {
					t.Fatalf("%s: the button of card %d lies above the screen (top %.0f)", step.name, i+1, b.Top)
				} else if !b.inView() {
					run(t, ctx, "scroll on", chromedp.ScrollIntoView(button))
					if after := boxOf(t, ctx, button); after.ScrollY < b.ScrollY || !after.inView() {
						t.Fatalf("%s: reaching card %d scrolled from %.0f to %.0f", step.name, i+1, b.ScrollY, after.ScrollY)
					}
				}
				before := scrollY(t, ctx)
				run(t, ctx, step.name, append(step.before,
					chromedp.Click(button),
					chromedp.WaitVisible(sel+`.settled [data-testid="done"]`),
				)...)
				out := boxOf(t, ctx, sel+` [data-testid="done"]`)
				if !out.inView() {
					t.Fatalf("%s: the outcome lies outside the screen (top %.0f, bottom %.0f, height %.0f)", step.name, out.Top, out.Bottom, out.Inner)
				}
				if d := out.ScrollY - before; d > 50 || d < -50 {
					t.Fatalf("%s: the page moved %.0f px", step.name, d)
				}
				if text := read(t, ctx, chromedp.Text(sel+` [data-testid="done"]`)); !strings.Contains(text, step.done) {
					t.Fatalf("%s: the outcome says %q", step.name, text)
				}
				if role, err := chromedp.Run(ctx, chromedp.AttributeValue(sel+` [data-testid="done"]`, "role")); err != nil || role.Value != "status" {
					t.Fatalf("%s: the outcome's role is %q (%v)", step.name, role.Value, err)
				}
			}
			run(t, ctx, "the pending count drops to nothing",
				chromedp.WaitVisible(`[data-testid="nav-pending"][data-count="0"]`),
			)
			// The outcomes stay where the moderator acted through the live
			// refresh that no longer lists those threads.
			run(t, ctx, "outcomes stay",
				chromedp.WaitVisible(`[data-testid="no-proposals"]`),
				chromedp.WaitVisible(`[data-thread="`+renamed+`"] [data-testid="done"]`),
			)
			screenshot(t, ctx, "proposals-settled-"+strconv.FormatInt(size.w, 10))
			for th, want := range map[string]string{friday: "decided", port: "deferred", renamed: "open"} {
				got := a.ok(200, "GET", "/api/v1/threads/"+th, ada, nil)
				if got.str("thread", "state") != want || got.get("thread", "confirmed") != true {
					t.Fatalf("%s after settling: %s", th, got.raw)
				}
			}
		})
	}
}

// TestThreadModerationOutcomeInPlace: on the thread page the outcome of
// Confirm, Re-mark, Close & lock and Reopen shows in the moderation
// section, where the moderator acted — not beside the thread, which on a
// phone lies far below — and stays there through the live refresh.
func TestThreadModerationOutcomeInPlace(t *testing.T) {
	for _, size := range widths {
		t.Run(strconv.FormatInt(size.w, 10)+"px", func(t *testing.T) {
			ctx := browser(t)
			a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
			a.humanToken("ada")
			alice, bob := a.token("alice"), a.token("bob")
			th := a.post(alice, map[string]any{"kind": "ask", "body": "Which port should linkd listen on?"}).str("thread", "id")
			for i := range 6 {
				a.post(bob, map[string]any{"kind": "note", "thread": th, "body": "Note " + strconv.Itoa(i) + ": measurements from the staging hosts."})
			}
			a.post(bob, map[string]any{"kind": "answer", "thread": th, "body": "8443."})

			signInAt(t, ctx, a, size.w, size.h, "/threads/"+th, `[data-testid="moderation-section"]`)
			section := `[data-testid="moderation-section"]`
			steps := []struct {
				name, button, done, state string
				before                    []chromedp.Action[chromedp.Void]
			}{
				{"confirm", "confirm", "Confirmed answered.", "answered", nil},
				{"re-mark", "remark", "Re-marked as decided.", "decided", choose(`#remark-`+th, "decided")},
				{"close and lock", "close-lock", "Closed and locked.", "closed", nil},
				{"reopen", "reopen", "Reopened.", "open", nil},
			}
			for _, step := range steps {
				button := section + ` [data-testid="` + step.button + `"]`
				run(t, ctx, "bring "+step.name+" into view", chromedp.ScrollIntoView(button))
				before := scrollY(t, ctx)
				run(t, ctx, step.name, append(step.before,
					chromedp.Click(button),
					// This step's outcome, not the last step's, which
					// stays (data-keep) until the answer replaces it.
					chromedp.WaitVisible(`//*[@data-testid="moderation-section"]//*[@data-testid="done"][normalize-space()=`+strconv.Quote(step.done)+`]`),
					// The live region refreshes around the outcome.
					chromedp.WaitVisible(`[data-testid="state"][data-state="`+step.state+`"][data-confirmed="true"]`),
				)...)
				if text := read(t, ctx, chromedp.Text(section+` [data-testid="done"]`)); text != step.done {
					t.Fatalf("%s: the outcome says %q", step.name, text)
				}
				out := boxOf(t, ctx, section+` [data-testid="done"]`)
				if !out.inView() {
					t.Fatalf("%s: the outcome lies outside the screen (top %.0f, bottom %.0f, height %.0f)", step.name, out.Top, out.Bottom, out.Inner)
				}
				if d := out.ScrollY - before; d > 50 || d < -50 {
					t.Fatalf("%s: the page moved %.0f px", step.name, d)
				}
			}
			screenshot(t, ctx, "thread-moderated-"+strconv.FormatInt(size.w, 10))
		})
	}
}

// TestHumanOpensAThread: a human opens a thread addressed to an agent,
// with a deadline, from the threads list, and lands on it; a refused form
// comes back with everything typed and the reason said plainly.
func TestHumanOpensAThread(t *testing.T) {
	for _, size := range widths {
		t.Run(strconv.FormatInt(size.w, 10)+"px", func(t *testing.T) {
			ctx := browser(t)
			a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
			ada, bob := a.humanToken("ada"), a.token("bob")
			a.post(bob, map[string]any{"kind": "ask", "body": "An older thread"})

			signInAt(t, ctx, a, size.w, size.h, "/threads", `[data-testid="new-thread-link"]`)
			run(t, ctx, "open the form",
				chromedp.Click(`[data-testid="new-thread-link"]`),
				chromedp.WaitVisible(`[data-testid="new-thread-form"]`),
			)
			long := strings.Repeat("Measured on every staging host. ", 15) // 480 characters
			run(t, ctx, "a question too long with its details",
				chromedp.SendKeys(`#new-title`, "Which port should linkd listen on?"),
				chromedp.SetValue(`#new-details`, long),
				chromedp.SetValue(`#new-to`, "ainotes:bob"),
				chromedp.SetValue(`#new-reply`, "24"),
				chromedp.Click(`[data-testid="new-submit"]`),
				chromedp.WaitVisible(`[data-testid="new-thread-form"] [data-testid="refusal"][data-reason="invalid_body"]`),
			)
			screenshot(t, ctx, "thread-new-refused-"+strconv.FormatInt(size.w, 10))
			if plain := read(t, ctx, chromedp.Text(`[data-testid="refusal"]`)); !strings.Contains(plain, "at most 500 characters") {
				t.Fatalf("the refusal says %q", plain)
			}
			for sel, want := range map[string]string{"#new-title": "Which port should linkd listen on?", "#new-details": long, "#new-to": "ainotes:bob", "#new-reply": "24"} {
				if got := read(t, ctx, chromedp.Value(sel)); got != want {
					t.Fatalf("%s after the refusal: %q, want %q", sel, got, want)
				}
			}
			run(t, ctx, "shorten and send",
				chromedp.SetValue(`#new-details`, "443 belongs to the proxy."),
				chromedp.Click(`[data-testid="new-submit"]`),
				chromedp.WaitVisible(`[data-testid="thread-title"]`),
			)
			screenshot(t, ctx, "thread-new-landed-"+strconv.FormatInt(size.w, 10))
			url := read(t, ctx, chromedp.Location())
			th := url[strings.LastIndex(url, "/")+1:]
			got := a.ok(200, "GET", "/api/v1/threads/"+th, ada, nil)
			switch {
			case !strings.HasPrefix(got.str("thread", "title"), "Which port should linkd listen on?"):
				t.Fatalf("title %q", got.str("thread", "title"))
			case got.str("thread", "awaiting", "identity") != "ainotes:bob":
				t.Fatalf("awaiting %v", got.get("thread", "awaiting"))
			case got.str("messages", 0, "reply_by") == "" || got.str("messages", 0, "author_kind") != "human":
				t.Fatalf("root %v", got.get("messages", 0))
			}
		})
	}
}
