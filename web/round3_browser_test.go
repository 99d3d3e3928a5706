package web_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"parley/migrations/dbtest"
)

// TestForumReadsLikeAForum walks issue 29's round 3 as the moderator ada,
// on a phone (390×844) and a desktop (1280×900): a plain-sentence sign-in
// refusal (item 10); the thread list's rows with who asked, who spoke last,
// "your turn", the due time and counts, titles in plain text, filters and
// search folded on the phone, at least four rows on the first screen
// (items 3, 4, 6) and the overdue count in the navigation (6); the thread
// page whose question is on the first screen and not shown twice, each
// message an avatar, a header and its body, with details folded and
// actions shown on hover or focus (2); the reply form offering only what
// the thread admits, saying what the act will do, the state picker only
// for mark (5); an unfocused re-mark choice surviving a live refresh (8);
// the side form turning into the closed panel when the thread is closed
// (9); the events as sentences linked to their messages (11); and search
// with one box, identifiers jumping straight there (12).
func TestForumReadsLikeAForum(t *testing.T) {
	for _, size := range widths {
		t.Run(strconv.FormatInt(size.w, 10)+"px", func(t *testing.T) {
			forumReads(t, size.w, size.h)
		})
	}
}

func forumReads(t *testing.T, w, h int64) {
	ctx := browser(t)
	clk := &movable{t: time.Now().UTC().Truncate(time.Second)}
	a := startServer(t, dbtest.Fresh(t, "sqlite"), guardConfig(clk))
	if err := a.forum.AddUser(context.Background(), "ada", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	alice, bob := a.token("alice"), a.token("bob")
	// One question past its deadline (the navigation counts it), then the
	// others, the newest due in 40 minutes and addressed to ada.
	late := a.post(bob, map[string]any{"kind": "ask", "to": map[string]any{"identity": "ainotes:alice"},
		"reply_by": clk.now().Add(time.Hour).Format(time.RFC3339), "body": "Is the mirror in sync?"}).str("thread", "id")
	clk.advance(2 * time.Hour)
	for i := range 4 {
		a.post(alice, map[string]any{"kind": "ask", "body": "Filler question number " + strconv.Itoa(i+1) + " about the staging hosts?"})
	}
	ask := a.post(alice, map[string]any{"kind": "ask", "to": map[string]any{"identity": "human:ada"},
		"reply_by": clk.now().Add(40 * time.Minute).Format(time.RFC3339),
		"body":     "Is **linkd** on `8443` as [the runbook](https://example.org/runbook) says?"})
	th, root := ask.str("thread", "id"), ask.str("message", "id")
	a.post(bob, map[string]any{"kind": "note", "thread": th, "body": "The runbook was updated on Monday."})
	const plainTitle = "Is linkd on 8443 as the runbook says?"

	// Item 10: a wrong password is said in one plain sentence.
	run(t, ctx, "a wrong password",
		chromedp.EmulateViewport(w, h),
		chromedp.Navigate(a.base+"/threads"),
		chromedp.WaitVisible(`[data-testid="signin-form"]`),
		chromedp.SendKeys(`#name`, "ada"),
		chromedp.SendKeys(`#password`, "wrong horse"),
		chromedp.Submit(`[data-testid="signin-form"]`),
		chromedp.WaitVisible(`[data-testid="refusal"]`),
	)
	if plain := read(t, ctx, chromedp.Text(`[data-testid="refusal"] [data-testid="plain"]`)); plain != "The name or the password is wrong: check both and sign in again." {
		t.Errorf("the sign-in refusal says %q", plain)
	}
	if vis := read(t, ctx, chromedp.Evaluate[string](`String(document.querySelector('[data-testid="small-print"]').open)`)); vis != "false" {
		t.Error("the refusal's small print is not folded")
	}
	screenshot(t, ctx, "round3-signin-refused-"+strconv.FormatInt(w, 10))
	run(t, ctx, "sign in",
		chromedp.Evaluate[chromedp.Void](`document.getElementById("name").value = "ada"; document.getElementById("password").value = ""; undefined`),
		chromedp.SendKeys(`#password`, "correct horse battery"),
		chromedp.Submit(`[data-testid="signin-form"]`),
		chromedp.WaitVisible(`[data-testid="thread-row"]`),
	)
	screenshot(t, ctx, "round3-threads-"+strconv.FormatInt(w, 10))

	// Items 3, 4, 6: the list.
	row := `[data-thread="` + th + `"]`
	if title := read(t, ctx, chromedp.Text(row+` [data-testid="row-title"]`)); title != plainTitle {
		t.Errorf("the list's title is %q, want the plain %q", title, plainTitle)
	}
	for sel, want := range map[string]string{
		row + ` [data-testid="asked-by"]`:  "ainotes:alice asked",
		row + ` [data-testid="last-post"]`: "last ainotes:bob",
		row + ` [data-testid="your-turn"]`: "your turn",
		row + ` [data-testid="due"]`:       "due in",
	} {
		if got := read(t, ctx, chromedp.Text(sel)); !strings.HasPrefix(strings.Join(strings.Fields(got), " "), want) {
			t.Errorf("%s reads %q, want %q…", sel, got, want)
		}
	}
	if n := read(t, ctx, chromedp.Text(row+` [data-testid="reply-count"]`)); !strings.Contains(n, "1") {
		t.Errorf("reply count %q", n)
	}
	if due := attr(t, ctx, row+` [data-testid="due"]`, "title"); !strings.HasPrefix(due, "answer due 20") {
		t.Errorf("the due time's exact time on hover: %q", due)
	}
	if n := attr(t, ctx, `[data-testid="nav-overdue-count"]`, "data-count"); n != "1" {
		t.Errorf("the navigation counts %s overdue, want 1", n)
	}
	if n := read(t, ctx, chromedp.Evaluate[string](`String([...document.querySelectorAll('[data-testid="thread-row"]')].filter(r => r.getBoundingClientRect().bottom <= innerHeight).length)`)); atoi(n) < 4 {
		t.Errorf("%s thread rows on the first screen, want at least 4", n)
	}
	if open := read(t, ctx, chromedp.Evaluate[string](`String(document.querySelector('[data-testid="filters-fold"]').open)`)); open != "false" {
		t.Error("the filters are not folded")
	}
	navBox := read(t, ctx, chromedp.Evaluate[string](`String(document.getElementById("nav-q").getClientRects().length > 0)`))
	if want := strconv.FormatBool(w > 600); navBox != want {
		t.Errorf("the navigation's search box shown: %s, want %s", navBox, want)
	}
	if late == "" {
		t.Fatal("no overdue thread")
	}

	// Item 2, 3, 4, 6: the thread page.
	run(t, ctx, "open the thread",
		chromedp.Click(row+` [data-testid="row-title"]`),
		chromedp.WaitVisible(`[data-testid="thread-live"]`),
		chromedp.WaitVisible(`[data-testid="aside-live"]`),
	)
	screenshot(t, ctx, "round3-thread-"+strconv.FormatInt(w, 10))
	if h1 := read(t, ctx, chromedp.Text(`[data-testid="thread-title"]`)); h1 != plainTitle {
		t.Errorf("h1 %q, want %q", h1, plainTitle)
	}
	if below := read(t, ctx, chromedp.Evaluate[string](`String(document.querySelector('[data-testid="thread-title"]').getBoundingClientRect().bottom <= innerHeight)`)); below != "true" {
		t.Error("the question is below the first screen")
	}
	if n := read(t, ctx, chromedp.Evaluate[string](`String(document.querySelectorAll('#`+root+` [data-testid="body"]').length)`)); n != "0" {
		t.Errorf("the root repeats the h1 (%s bodies)", n)
	}
	if due := read(t, ctx, chromedp.Text(`[data-testid="thread-live"] [data-testid="due"]`)); !strings.HasPrefix(due, "due in") {
		t.Errorf("the thread's due time reads %q", due)
	}
	// Each message: an avatar of its author's colour, the body the largest
	// text, ids folded away.
	avatars := read(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-testid="message"] > .avatar')].map(a => a.dataset.identity + "=" + a.className).join("|")`))
	if !strings.Contains(avatars, "ainotes:alice=avatar hue-") || !strings.Contains(avatars, "ainotes:bob=avatar hue-") {
		t.Errorf("avatars %q", avatars)
	}
	note := `[data-kind="note"]`
	sizes := read(t, ctx, chromedp.Evaluate[string](`(() => { const m = document.querySelector('`+note+`'); const px = e => parseFloat(getComputedStyle(e).fontSize); return px(m.querySelector('[data-testid="body"] p')) > px(m.querySelector('header')) && px(m.querySelector('[data-testid="body"] p')) > px(m.querySelector('footer')) ? "body" : "meta" })()`))
	if sizes != "body" {
		t.Error("a message's header or footer is as large as its body")
	}
	if open := read(t, ctx, chromedp.Evaluate[string](`String(document.querySelector('`+note+` [data-testid="message-details"]').open)`)); open != "false" {
		t.Error("a message's ids are not folded away")
	}
	hover := read(t, ctx, chromedp.Evaluate[string](`String(matchMedia("(hover: hover) and (pointer: fine)").matches)`))
	opacity := func() string {
		return read(t, ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('`+note+` [data-testid="reply-button"]')).opacity`))
	}
	if o := opacity(); (hover == "true") != (o == "0") {
		t.Errorf("a message's actions: opacity %s with hover %s (hidden until pointed at, always on touch)", o, hover)
	}
	run(t, ctx, "reach the actions by keyboard", chromedp.Focus(note+` [data-testid="reply-button"]`))
	run(t, ctx, "the actions show on focus", until(`getComputedStyle(document.querySelector('`+note+` [data-testid="reply-button"]')).opacity === "1"`))

	// Item 5: the acts the thread admits, in words.
	offered := read(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('#reply-kind option')].map(o => o.value).join(",")`))
	if strings.Contains(offered, "reopen") || !strings.Contains(offered, "answer") || !strings.Contains(offered, "mark") {
		t.Errorf("the open thread's form offers %s", offered)
	}
	if shown := read(t, ctx, chromedp.Evaluate[string](`String(document.getElementById("reply-state").getClientRects().length > 0)`)); shown != "false" {
		t.Error("the state picker shows for note")
	}
	run(t, ctx, "choose answer",
		chromedp.SetValue(`#reply-kind`, "answer"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("reply-kind").dispatchEvent(new Event("change", {bubbles: true})); undefined`),
	)
	if effect := read(t, ctx, chromedp.Text(`[data-testid="act-effect"]`)); effect != "Marks the thread answered and gives the turn to ainotes:alice." {
		t.Errorf("answer's effect reads %q", effect)
	}
	run(t, ctx, "choose mark",
		chromedp.SetValue(`#reply-kind`, "mark"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("reply-kind").dispatchEvent(new Event("change", {bubbles: true})); undefined`),
		until(`document.getElementById("reply-state").getClientRects().length > 0`),
	)
	screenshot(t, ctx, "round3-reply-mark-"+strconv.FormatInt(w, 10))
	run(t, ctx, "back to note",
		chromedp.SetValue(`#reply-kind`, "note"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("reply-kind").dispatchEvent(new Event("change", {bubbles: true})); undefined`),
	)

	// Item 8: a choice made and left keeps its value through a refresh.
	run(t, ctx, "pick a re-mark state and move on",
		chromedp.WaitReady(`body[data-live-open]`),
		chromedp.SetValue(`[data-testid="remark-state"]`, "deferred"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="remark-state"]').dispatchEvent(new Event("change", {bubbles: true})); undefined`),
		chromedp.Focus(`#reply-body`),
	)
	later := a.post(bob, map[string]any{"kind": "note", "thread": th, "body": "One more thing about the runbook."}).str("message", "id")
	run(t, ctx, "the refresh lands", chromedp.WaitVisible(`#`+later))
	if v := read(t, ctx, chromedp.Value(`[data-testid="remark-state"]`)); v != "deferred" {
		t.Errorf("the refresh reset the re-mark choice to %q", v)
	}

	// Items 9, 11: closing the thread turns the side form into the closed
	// panel; the timeline says so, linked to the message.
	run(t, ctx, "close and lock",
		chromedp.Click(`[data-testid="close-lock"]`),
		chromedp.WaitVisible(`[data-testid="thread-banner"]`),
		chromedp.WaitVisible(`[data-testid="reply-closed"]`),
	)
	if n := read(t, ctx, chromedp.Evaluate[string](`String(document.querySelectorAll('[data-testid="reply-form"]').length)`)); n != "0" {
		t.Errorf("%s reply forms stay on the closed thread", n)
	}
	events := read(t, ctx, chromedp.Text(`[data-testid="timeline"]`))
	for _, want := range []string{"ainotes:alice opened the thread", "ada closed the thread"} {
		if !strings.Contains(events, want) {
			t.Errorf("the timeline lacks %q:\n%s", want, events)
		}
	}
	if href := read(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-testid="event"]')].pop().querySelector('[data-testid="event-link"]').getAttribute("href")`)); !strings.HasPrefix(href, "#msg_") {
		t.Errorf("the close's entry links to %q", href)
	}
	screenshot(t, ctx, "round3-thread-closed-"+strconv.FormatInt(w, 10))

	// Item 12: one box; an identifier jumps.
	run(t, ctx, "open search",
		chromedp.Navigate(a.base+"/search"),
		chromedp.WaitVisible(`#q`),
	)
	if n := read(t, ctx, chromedp.Evaluate[string](`String([...document.querySelectorAll('input[type=search]')].filter(i => i.getClientRects().length > 0).length)`)); n != "1" {
		t.Errorf("the search page shows %s boxes", n)
	}
	run(t, ctx, "jump to a thread",
		chromedp.SendKeys(`#q`, th+"\n"),
		chromedp.WaitVisible(`[data-testid="thread-title"]`),
	)
	if loc := read(t, ctx, chromedp.Location()); !strings.HasSuffix(loc, "/threads/"+th) {
		t.Errorf("th_N leads to %s", loc)
	}
	run(t, ctx, "an id that names nothing",
		chromedp.Navigate(a.base+"/search"),
		chromedp.WaitVisible(`#q`),
		chromedp.SendKeys(`#q`, "th_999\n"),
		chromedp.WaitVisible(`[data-testid="not-found"]`),
	)
	run(t, ctx, "an identity",
		chromedp.Evaluate[chromedp.Void](`document.getElementById("q").value = ""; undefined`),
		chromedp.SendKeys(`#q`, "ainotes:bob\n"),
		chromedp.WaitVisible(`[data-testid="identity-found"]`),
	)
	screenshot(t, ctx, "round3-search-identity-"+strconv.FormatInt(w, 10))
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
