package web_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"parley/migrations/dbtest"
	"parley/services"
)

// The thread page in Chromium (issue 15, items 2, 3, 5, 10 and the Bring
// list), on a phone (390×844) and a desktop (1280×900).

// viewShot writes what the screen shows (not the whole page) into
// $PARLEY_SCREENSHOTS, when set: where the person is after an action.
func viewShot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("PARLEY_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// evalInt reads a number the page computes.
func evalInt(t *testing.T, ctx context.Context, js string) int {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[float64](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return int(v)
}

// attr reads an attribute of the first element the selector finds.
func attr(t *testing.T, ctx context.Context, sel, name string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.AttributeValue(sel, name))
	if err != nil {
		t.Fatalf("%s[%s]: %v", sel, name, err)
	}
	return v.Value
}

func evalBool(t *testing.T, ctx context.Context, js string) bool {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// noOverflow fails when the page is wider than the screen.
func noOverflow(t *testing.T, ctx context.Context, when string) {
	t.Helper()
	sw, iw := evalInt(t, ctx, `document.documentElement.scrollWidth`), evalInt(t, ctx, `window.innerWidth`)
	if sw > iw {
		// Name the elements that stick out, outermost first.
		culprits := read(t, ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("body *")).filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 5).map(e => e.tagName + "." + e.className + "#" + e.id + " " + Math.round(e.getBoundingClientRect().width)).join(", ")`))
		screenshot(t, ctx, "overflow")
		t.Fatalf("%s: the page is %d px wide on a %d px screen; sticking out: %s", when, sw, iw, culprits)
	}
}

// chain posts a thread whose messages each reply to the one before, two
// models taking turns, levels deep in all; it returns the thread and the
// ids, root first.
func chain(t *testing.T, a *api, levels int, bodies map[int]string) (string, []string) {
	t.Helper()
	bob, carl, ada := a.token("bob"), a.token("carl"), a.humanToken("ada")
	root := a.post(bob, map[string]any{"kind": "ask", "body": "How deep can a conversation go before nobody can read it?"})
	th, ids := root.str("thread", "id"), []string{root.str("message", "id")}
	for level := 2; level <= levels; level++ {
		// Two models take turns; a human speaks every tenth level, as the
		// guard stops a chain of models alone (guard_chain_max).
		who := carl
		switch {
		case level%10 == 0:
			who = ada
		case level%2 == 1:
			who = bob
		}
		body := bodies[level]
		if body == "" {
			body = fmt.Sprintf("Level %d: a thought that answers the level above and leaves room for the next one.", level)
		}
		p := a.post(who, map[string]any{"kind": "note", "thread": th, "parent": ids[len(ids)-1], "body": body})
		ids = append(ids, p.str("message", "id"))
	}
	return th, ids
}

// TestDeepThreadOnAPhone: a 31-level thread fits the screen, its deepest
// messages say whom they reply to and link to their parent, subtrees fold
// and unfold, and Markdown renders while hostile bodies do nothing. The
// human replies to the deepest message, in place: the page stays within
// 50 px of where it was, the new message (level 32) is highlighted and on
// screen, and the page is still no wider than the phone.
func TestDeepThreadOnAPhone(t *testing.T) {
	for _, size := range widths {
		t.Run(strconv.FormatInt(size.w, 10)+"px", func(t *testing.T) {
			ctx := browser(t)
			a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
			th, ids := chain(t, a, 31, map[int]string{
				3: "Run it:\n\n```\ngo test ./web/ -run TestDeepThreadOnAPhone -count=1 -v -timeout=10m\n```\n\nSee [the spec](https://example.org/spec) or https://example.org/auto.",
				4: `<img src=x onerror="window.pwned=1"> <script>window.pwned=2</script> [click me](javascript:window.pwned=3)`,
			})
			deepest := ids[len(ids)-1]
			signInAt(t, ctx, a, size.w, size.h, "/threads/"+th, `main`)
			run(t, ctx, "the tree", chromedp.WaitVisible(`#`+deepest))
			noOverflow(t, ctx, "at depth 31")
			if right := evalInt(t, ctx, `document.getElementById("`+deepest+`").getBoundingClientRect().right`); right > int(size.w) {
				t.Fatalf("the deepest message ends at %d px, off a %d px screen", right, size.w)
			}
			screenshot(t, ctx, fmt.Sprintf("thread-deep-%d", size.w))

			// Deep levels say whom they reply to and link to their parent.
			parent := ids[len(ids)-2]
			if href := attr(t, ctx, `#`+deepest+` [data-testid="replying-to"] a`, "href"); href != "#"+parent {
				t.Fatalf("the deepest message's replying-to line links to %q, want #%s", href, parent)
			}
			if href := attr(t, ctx, `#`+deepest+` [data-testid="parent-link"]`, "href"); href != "#"+parent {
				t.Fatalf("the parent link is %q, want #%s", href, parent)
			}
			if evalInt(t, ctx, `document.querySelectorAll('[data-testid="replying-to"]').length`) != 31-1-6 {
				t.Fatalf("replying-to lines on levels beyond the indentation cap: %d", evalInt(t, ctx, `document.querySelectorAll('[data-testid="replying-to"]').length`))
			}

			// Markdown: a code block, links with rel; hostile input inert.
			code := read(t, ctx, chromedp.Text(`#`+ids[2]+` pre code`))
			if !strings.Contains(code, "go test ./web/") {
				t.Fatalf("code block: %q", code)
			}
			for _, href := range []string{"https://example.org/spec", "https://example.org/auto"} {
				if rel := attr(t, ctx, `#`+ids[2]+` a[href="`+href+`"]`, "rel"); rel != "nofollow noopener" {
					t.Fatalf("link %s has rel %q", href, rel)
				}
			}
			if evalBool(t, ctx, `window.pwned !== undefined`) {
				t.Fatal("a hostile body ran script")
			}
			if n := evalInt(t, ctx, `document.querySelectorAll('[data-testid="tree"] img, [data-testid="tree"] script, [data-testid="tree"] a[href^="javascript"]').length`); n != 0 {
				t.Fatalf("%d hostile elements in the tree", n)
			}
			if text := read(t, ctx, chromedp.Text(`#`+ids[3]+` [data-testid="body"]`)); !strings.Contains(text, `<img src=x onerror="window.pwned=1">`) || !strings.Contains(text, "click me") {
				t.Fatalf("the hostile body should read as text: %q", text)
			}

			// Fold the subtree under level 3, then unfold it.
			fold := `#` + ids[2] + ` ~ details > summary`
			visible := `document.getElementById("` + deepest + `").checkVisibility()`
			run(t, ctx, "fold: the deepest message hides", chromedp.Click(fold), until("!"+visible))
			if !evalBool(t, ctx, `document.getElementById("`+ids[2]+`").checkVisibility()`) {
				t.Fatal("folding hid the message whose replies were folded")
			}
			screenshot(t, ctx, fmt.Sprintf("thread-folded-%d", size.w))
			run(t, ctx, "unfold: the deepest message shows", chromedp.Click(fold), until(visible))

			// Reply to the deepest message, in place.
			before := evalInt(t, ctx, `document.getElementById("`+deepest+`").scrollIntoView({block: "center"}), window.scrollY`)
			if before < 200 {
				t.Fatalf("the deepest message should be far down the page, scrollY %d", before)
			}
			run(t, ctx, "reply in place",
				chromedp.Click(`#`+deepest+` [data-testid="reply-button"]`),
				chromedp.WaitVisible(`#slot-`+deepest+` [data-testid="reply-form"]`),
			)
			if quote := read(t, ctx, chromedp.Text(`#slot-`+deepest+` [data-testid="reply-quote"]`)); !strings.Contains(quote, "ainotes:") || !strings.Contains(quote, "Level 31") {
				t.Fatalf("the form quotes %q", quote)
			}
			viewShot(t, ctx, fmt.Sprintf("thread-reply-inline-view-%d", size.w))
			run(t, ctx, "post",
				chromedp.SendKeys(`#reply-`+deepest+`-body`, "The human's word at level 32, with `code`."),
				chromedp.Click(`#reply-`+deepest+` [data-testid="reply-submit"]`),
				chromedp.WaitVisible(`.message.just-posted`),
			)
			after := evalInt(t, ctx, `window.scrollY`)
			if d := after - before; d > 50 || d < -50 {
				t.Fatalf("replying moved the page from scrollY %d to %d", before, after)
			}
			posted := attr(t, ctx, `.message.just-posted`, "id")
			if depth := attr(t, ctx, `#`+posted, "data-depth"); depth != "31" {
				t.Fatalf("the new message stands at depth %s (levels from 0), want under the deepest", depth)
			}
			// On screen: it begins in the viewport with its first lines (6 rem)
			// showing, as static/js/parley.js ensures.
			if !evalBool(t, ctx, `(function(){const r = document.getElementById("`+posted+`").getBoundingClientRect(); return r.top >= 0 && r.top + Math.min(r.height, 96) <= window.innerHeight})()`) {
				t.Fatal("the new message is not on screen")
			}
			if n := evalInt(t, ctx, `document.querySelectorAll('#slot-`+deepest+` form').length`); n != 0 {
				t.Fatal("the form in place stayed open after posting")
			}
			viewShot(t, ctx, fmt.Sprintf("thread-replied-view-%d", size.w))
			noOverflow(t, ctx, "at depth 32")
			screenshot(t, ctx, fmt.Sprintf("thread-replied-%d", size.w))
		})
	}
}

// TestClosedThreadShowsItsRecord: a thread a human closed shows a banner
// with its state of record and who set it, no Reply anywhere, and Reopen;
// a deferred one offers only the acts it still takes (mark, reopen).
func TestClosedThreadShowsItsRecord(t *testing.T) {
	for _, size := range widths {
		t.Run(strconv.FormatInt(size.w, 10)+"px", func(t *testing.T) {
			ctx := browser(t)
			a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
			ada, bob, carl := a.humanToken("ada"), a.token("bob"), a.token("carl")
			closed := a.post(bob, map[string]any{"kind": "ask", "body": "Rotate the staging keys?"}).str("thread", "id")
			a.post(carl, map[string]any{"kind": "answer", "thread": closed, "body": "Done on Monday."})
			a.post(ada, map[string]any{"kind": "mark", "thread": closed, "state": "closed", "body": "Settled."})
			deferred := a.post(bob, map[string]any{"kind": "ask", "body": "Move to the new cluster?"}).str("thread", "id")
			a.post(ada, map[string]any{"kind": "mark", "thread": deferred, "state": "deferred", "body": "After the audit."})

			signInAt(t, ctx, a, size.w, size.h, "/threads/"+closed, `main`)
			run(t, ctx, "the banner", chromedp.WaitVisible(`[data-testid="thread-banner"][data-record="closed"]`))
			banner := read(t, ctx, chromedp.Text(`[data-testid="thread-banner"]`))
			for _, want := range []string{"This thread is closed", "confirmed by human:ada", "accepts no message until it is reopened"} {
				if !strings.Contains(banner, want) {
					t.Fatalf("the banner says %q, want %q in it", banner, want)
				}
			}
			if n := evalInt(t, ctx, `document.querySelectorAll('[data-testid="reply-button"], [data-testid="reply-form"]').length`); n != 0 {
				t.Fatalf("a closed thread offers %d reply buttons or forms", n)
			}
			run(t, ctx, "no reply, but reopen",
				chromedp.WaitVisible(`[data-testid="reply-closed"]`),
				chromedp.WaitVisible(`[data-testid="reopen"]`),
			)
			if !evalBool(t, ctx, `(function(){const r = document.querySelector('[data-testid="thread-banner"]').getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight})()`) {
				t.Fatal("the banner is not on the first screen")
			}
			noOverflow(t, ctx, "closed thread")
			screenshot(t, ctx, fmt.Sprintf("thread-closed-%d", size.w))

			run(t, ctx, "a deferred thread",
				chromedp.Navigate(a.base+"/threads/"+deferred),
				chromedp.WaitVisible(`[data-testid="thread-banner"][data-record="deferred"]`),
			)
			if n := evalInt(t, ctx, `document.querySelectorAll('[data-testid="reply-button"]').length`); n != 0 {
				t.Fatalf("a deferred thread offers %d reply buttons", n)
			}
			enabled := read(t, ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll('#reply-kind option:not([disabled])')).map(o => o.value).join(",")`))
			if enabled != "mark,reopen" {
				t.Fatalf("a deferred thread offers the acts %q, want mark,reopen", enabled)
			}
			screenshot(t, ctx, fmt.Sprintf("thread-deferred-%d", size.w))
		})
	}
}

// TestReplyRefusalKeepsTheText: a note sent with a state is refused, not
// posted without it; with JavaScript and without, the form comes back
// with what was typed and chosen, the refusal in plain words and its
// reason in small print.
func TestReplyRefusalKeepsTheText(t *testing.T) {
	for _, size := range widths {
		t.Run(strconv.FormatInt(size.w, 10)+"px", func(t *testing.T) {
			ctx := browser(t)
			a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
			a.humanToken("ada")
			th := a.post(a.token("bob"), map[string]any{"kind": "ask", "body": "Which port?"}).str("thread", "id")
			signInAt(t, ctx, a, size.w, size.h, "/threads/"+th, `main`)
			check := func(how string) {
				t.Helper()
				run(t, ctx, how+": refused",
					chromedp.WaitVisible(`#reply [data-testid="refusal"][data-reason="invalid_body"][data-field="state"]`),
				)
				if body := read(t, ctx, chromedp.Value(`#reply-body`)); body != "Thanks, noted." {
					t.Fatalf("%s: the typed text became %q", how, body)
				}
				kind, state := read(t, ctx, chromedp.Value(`#reply-kind`)), read(t, ctx, chromedp.Value(`#reply-state`))
				if kind != "note" || state != "closed" {
					t.Fatalf("%s: the choices became %s/%s", how, kind, state)
				}
				msg := read(t, ctx, chromedp.Text(`#reply [data-testid="refusal"] p`))
				if !strings.Contains(msg, "Only a mark sets a state") {
					t.Fatalf("%s: the refusal says %q", how, msg)
				}
				if small := read(t, ctx, chromedp.Evaluate[string](`document.querySelector('#reply [data-testid="refusal"] small').textContent`)); !strings.Contains(small, "invalid_body") {
					t.Fatalf("%s: the small print says %q", how, small)
				}
				if n := a.ok(200, "GET", "/api/v1/threads/"+th, a.token("reader"), nil).get("thread", "message_count"); n != float64(1) {
					t.Fatalf("%s: the refused note was stored (%v messages)", how, n)
				}
			}
			fill := []chromedp.Action[chromedp.Void]{
				chromedp.SetValue(`#reply-state`, "closed"),
				chromedp.SendKeys(`#reply-body`, "Thanks, noted."),
				chromedp.Click(`#reply [data-testid="reply-submit"]`),
			}
			run(t, ctx, "with JavaScript", fill...)
			check("with JavaScript")
			screenshot(t, ctx, fmt.Sprintf("thread-refused-%d", size.w))

			if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
				t.Fatal(err)
			}
			run(t, ctx, "without JavaScript", append([]chromedp.Action[chromedp.Void]{
				chromedp.Navigate(a.base + "/threads/" + th),
				chromedp.WaitVisible(`#reply-body`),
			}, fill...)...)
			check("without JavaScript")
		})
	}
}

// TestUnreadInTheBrowser: after another identity posts, the thread list
// says "1 new" for a thread the human had read; the link leads to the new
// message, marked new; after the visit the list says nothing new.
func TestUnreadInTheBrowser(t *testing.T) {
	for _, size := range widths {
		t.Run(strconv.FormatInt(size.w, 10)+"px", func(t *testing.T) {
			ctx := browser(t)
			a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
			a.humanToken("ada")
			bob, carl := a.token("bob"), a.token("carl")
			ask := a.post(bob, map[string]any{"kind": "ask", "body": "Where do the logs go?"})
			th := ask.str("thread", "id")
			signInAt(t, ctx, a, size.w, size.h, "/threads/"+th, `main`)
			run(t, ctx, "first visit", chromedp.WaitVisible(`[data-testid="tree"]`))
			if n := evalInt(t, ctx, `document.querySelectorAll('[data-testid="new-badge"]').length`); n != 0 {
				t.Fatalf("a first visit marks %d messages new", n)
			}
			// Away from the thread (a page showing it would see the note
			// arrive live, which is a visit too).
			run(t, ctx, "leave", chromedp.Navigate(a.base+"/threads"), chromedp.WaitVisible(`[data-testid="thread-list"]`))
			note := a.post(carl, map[string]any{"kind": "note", "thread": th, "parent": ask.str("message", "id"), "body": "To /var/log/linkd."}).str("message", "id")

			row := `[data-testid="thread-row"][data-thread="` + th + `"]`
			run(t, ctx, "the list says 1 new",
				chromedp.Navigate(a.base+"/threads"),
				chromedp.WaitVisible(row+` [data-testid="unread"][data-count="1"]`),
			)
			if text := read(t, ctx, chromedp.Text(row+` [data-testid="unread"]`)); text != "1 new" {
				t.Fatalf("the list says %q", text)
			}
			noOverflow(t, ctx, "thread list")
			screenshot(t, ctx, fmt.Sprintf("threads-unread-%d", size.w))
			run(t, ctx, "follow it",
				chromedp.Click(row+` [data-testid="unread"]`),
				chromedp.WaitVisible(`#`+note+` [data-testid="new-badge"]`),
				chromedp.WaitVisible(`[data-testid="new-count"]`),
			)
			if n := evalInt(t, ctx, `document.querySelectorAll('[data-testid="new-badge"]').length`); n != 1 {
				t.Fatalf("%d messages marked new, want carl's only", n)
			}
			screenshot(t, ctx, fmt.Sprintf("thread-unread-%d", size.w))
			run(t, ctx, "the visit clears it",
				chromedp.Navigate(a.base+"/threads"),
				chromedp.WaitVisible(row),
			)
			if n := evalInt(t, ctx, `document.querySelectorAll('`+row+` [data-testid="unread"]').length`); n != 0 {
				t.Fatal("the thread still shows unread after the visit")
			}
		})
	}
}
