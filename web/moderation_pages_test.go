package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"parley/services"
)

// noRedirect is b's client without following redirects: the tests read
// where a form sends the browser.
func (b *browserless) post(path string, form url.Values) *http.Response {
	b.t.Helper()
	client := &http.Client{Jar: b.http.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	form.Set("_csrf", b.csrf)
	resp, err := client.PostForm(b.a.base+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestProposalsPageWithoutJavaScript: the queue shows each proposal's act
// and the record beneath; a plain form's redirect returns to the acted-on
// item's anchor, where the outcome shows — on the proposals page and on
// the thread page; the navigation counts what is pending.
func TestProposalsPageWithoutJavaScript(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		b := signedIn(t, a)
		alice, bob := a.token("alice"), a.token("bob")
		th := a.post(alice, map[string]any{"kind": "ask", "body": "Ship on Friday?"}).str("thread", "id")
		ans := a.post(bob, map[string]any{"kind": "answer", "thread": th, "body": "Yes: the branch is green."}).str("message", "id")
		a.post(alice, map[string]any{"kind": "decide", "thread": th, "parent": ans, "body": "Friday it is."})
		other := a.post(alice, map[string]any{"kind": "ask", "body": "Rename it?"}).str("thread", "id")
		a.post(alice, map[string]any{"kind": "mark", "thread": other, "state": "rejected", "body": "No churn."})

		doc := b.page("GET", "/proposals", nil, 200)
		if n := doc.Find(`[data-testid="nav-pending"]`).Text(); n != "(2)" {
			t.Fatalf("nav count %q", n)
		}
		card := doc.Find(`#proposal-` + th)
		if card.Find(`[data-testid="act-body"]`).Text() != "Friday it is." || !strings.Contains(card.Find(`[data-testid="act-parent"]`).Text(), "Yes: the branch is green.") {
			t.Fatalf("card %q", card.Text())
		}
		if href := card.Find(`[data-testid="act-link"]`).AttrOr("href", ""); !strings.HasPrefix(href, "/threads/"+th+"#msg_") {
			t.Fatalf("act link %q", href)
		}
		if rec := card.Find(`[data-testid="record-text"]`).Text(); rec != "open · opened by ainotes:alice" {
			t.Fatalf("record %q", rec)
		}
		if card.Find(`time[datetime][title]`).Length() == 0 {
			t.Fatal("the act's age is not shown")
		}

		// The pending count answers 204 while it stands.
		resp, _ := b.http.Get(a.base + "/proposals/pending?v=2")
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("unchanged count: %d", resp.StatusCode)
		}

		resp = b.post("/proposals/"+th+"/confirm", url.Values{"state": {"decided"}})
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/proposals?") || !strings.HasSuffix(loc, "#proposal-"+th) {
			t.Fatalf("after confirm: %d %q", resp.StatusCode, loc)
		}
		back := b.page("GET", strings.TrimSuffix(loc, "#proposal-"+th), nil, 200)
		if done := back.Find(`#proposal-` + th + `[data-testid="done"]`); done.Length() != 1 || !strings.Contains(done.Text(), "Confirmed decided.") || done.AttrOr("role", "") != "status" {
			t.Fatalf("the outcome after the redirect: %q", back.Find(`main`).Text())
		}
		if n := back.Find(`[data-testid="nav-pending"]`).Text(); n != "(1)" {
			t.Fatalf("nav count after confirming %q", n)
		}
		// A link cannot make the page say anything else.
		forged := b.page("GET", "/proposals?done=confirm&state=%3Cb%3Ehi&thread="+th, nil, 200)
		if forged.Find(`[data-testid="done"]`).Length() != 0 || strings.Contains(forged.Find(`main`).Text(), "<b>") {
			t.Fatal("the outcome took text from the link")
		}

		resp = b.post("/threads/"+other+"/withdraw", url.Values{"state": {"open"}, "proposal": {"rejected"}})
		loc = resp.Header.Get("Location")
		if resp.StatusCode != http.StatusSeeOther || !strings.HasSuffix(loc, "#moderation-"+other) {
			t.Fatalf("after turning down on the thread page: %d %q", resp.StatusCode, loc)
		}
		page := b.page("GET", strings.TrimSuffix(loc, "#moderation-"+other), nil, 200)
		if done := page.Find(`#moderation-` + other + ` [data-testid="done"]`).Text(); done != "Turned down the proposal rejected: the thread stays open." {
			t.Fatalf("the thread page's outcome %q", done)
		}
		if n := page.Find(`[data-testid="nav-pending"]`).Text(); n != "(0)" {
			t.Fatalf("nav count after settling all %q", n)
		}
		fresh := b.page("GET", "/proposals/pending?v=2", nil, 200, "HX-Request", "true")
		if fresh.Find(`[data-testid="nav-pending"]`).AttrOr("data-count", "") != "0" {
			t.Fatal("the live count did not drop")
		}

		// With htmx, a refusal on the thread page answers in the section's
		// outcome line and keeps its buttons.
		refused := b.page("POST", "/threads/"+other+"/confirm", url.Values{"state": {"closed"}}, 200, "HX-Request", "true", "X-CSRF-Token", b.csrf)
		if refused.Find(`#moderation-outcome-`+other+` [data-testid="refusal"]`).AttrOr("data-reason", "") != "state_changed" {
			t.Fatalf("refusal in place: %q", refused.Text())
		}
		// Without JavaScript, a refusal returns to the item too: the
		// thread's moderation section, or the proposal's card, says why in
		// the page's own words and keeps its buttons.
		resp = b.post("/threads/"+other+"/confirm", url.Values{"state": {"closed"}})
		loc = resp.Header.Get("Location")
		if resp.StatusCode != http.StatusSeeOther || !strings.HasSuffix(loc, "#moderation-"+other) || !strings.Contains(loc, "refused=state_changed") {
			t.Fatalf("after a refused confirm: %d %q", resp.StatusCode, loc)
		}
		page = b.page("GET", strings.TrimSuffix(loc, "#moderation-"+other), nil, 200)
		section := page.Find(`#moderation-` + other)
		if section.Find(`[data-testid="refusal"]`).AttrOr("data-reason", "") != "state_changed" || section.Find(`button`).Length() == 0 {
			t.Fatalf("the refusal on the thread page: %q", section.Text())
		}
		next := a.post(alice, map[string]any{"kind": "ask", "body": "Rotate the keys?"}).str("thread", "id")
		a.post(alice, map[string]any{"kind": "mark", "thread": next, "state": "deferred", "body": "Later."})
		resp = b.post("/proposals/"+next+"/confirm", url.Values{"state": {"obsolete"}})
		loc = resp.Header.Get("Location")
		back = b.page("GET", strings.TrimSuffix(loc, "#proposal-"+next), nil, 200)
		card = back.Find(`#proposal-` + next)
		if card.Find(`[data-testid="refusal"]`).AttrOr("data-reason", "") != "state_changed" || card.Find(`button`).Length() == 0 {
			t.Fatalf("the refusal on the proposals page (%q): %q", loc, card.Text())
		}
		// Only a known reason is shown, in the page's words.
		forged = b.page("GET", "/threads/"+other+"?refused=%3Cb%3Ehi", nil, 200)
		if forged.Find(`[data-testid="refusal"]`).Length() != 0 {
			t.Fatal("the refusal took text from the link")
		}
	})
}

// TestNewThreadPage: the form lists the directory; a refused form comes
// back with the typed text and the reason; a sent one lands on the thread.
func TestNewThreadPage(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		b := signedIn(t, a)
		a.token("bob")
		form := b.page("GET", "/threads/new", nil, 200)
		if form.Find(`#new-to option[value="ainotes:bob"]`).Length() != 1 {
			t.Fatal("the directory is not offered")
		}
		if b.page("GET", "/threads", nil, 200).Find(`a[href="/threads/new"]`).Length() < 2 {
			t.Fatal("New thread is not linked from the list's header and the navigation")
		}
		long := strings.Repeat("x", 495)
		refused := b.page("POST", "/threads", url.Values{"_csrf": {b.csrf}, "title": {"Which port?"}, "details": {long}, "to": {"ainotes:bob"}, "reply_within": {"24"}}, 400)
		if refused.Find(`[data-testid="refusal"]`).AttrOr("data-reason", "") != "invalid_body" ||
			refused.Find(`#new-title`).AttrOr("value", "") != "Which port?" || refused.Find(`#new-details`).Text() != long ||
			refused.Find(`#new-to option[selected]`).AttrOr("value", "") != "ainotes:bob" || refused.Find(`#new-reply option[selected]`).AttrOr("value", "") != "24" {
			t.Fatal("the refused form lost what was typed")
		}
		resp := b.post("/threads", url.Values{"title": {"Which port?"}, "details": {"443 is the proxy's."}, "to": {"ainotes:bob"}, "reply_within": {"4"}})
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/threads/th_") {
			t.Fatalf("after sending: %d %q", resp.StatusCode, loc)
		}
		got := a.ok(200, "GET", "/api/v1"+loc, a.token("reader", services.RightRead), nil)
		if got.str("messages", 0, "body") != "Which port?\n\n443 is the proxy's." || got.str("thread", "awaiting", "identity") != "ainotes:bob" ||
			got.str("messages", 0, "reply_by") == "" || got.str("messages", 0, "from", "identity") != "human:ada" {
			t.Fatalf("the new thread: %s", got.raw)
		}
	})
}
