package web_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"parley/migrations/dbtest"
	"parley/services"
)

// browserless is a cookie-keeping HTTP client, signed in as a human.
type browserless struct {
	t    *testing.T
	a    *api
	http *http.Client
	csrf string
}

func signedIn(t *testing.T, a *api) *browserless {
	t.Helper()
	if err := a.forum.AddUser(context.Background(), "ada", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	b := &browserless{t: t, a: a, http: &http.Client{Jar: jar}}
	form := b.page("GET", "/signin", nil, 200)
	token, _ := form.Find(`input[name="_csrf"]`).Attr("value")
	doc := b.page("POST", "/signin", url.Values{"_csrf": {token}, "name": {"ada"}, "password": {"correct horse battery"}}, 200)
	b.csrf = csrfOf(doc)
	if b.csrf == "" || doc.Find(`[data-testid="identity"]`).Text() != "human:ada" {
		t.Fatal("sign-in did not land on a signed-in page")
	}
	return b
}

func csrfOf(doc *goquery.Document) string {
	headers, _ := doc.Find("body").Attr("hx-headers")
	m := regexp.MustCompile(`"X-CSRF-Token": "([0-9a-f]+)"`).FindStringSubmatch(headers)
	if m == nil {
		return ""
	}
	return m[1]
}

// page requests a page and parses it, checking the status.
func (b *browserless) page(method, path string, form url.Values, status int, header ...string) *goquery.Document {
	b.t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, _ := http.NewRequest(method, b.a.base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.http.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != status {
		b.t.Fatalf("%s %s: status %d, want %d", method, path, resp.StatusCode, status)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return doc
}

func TestPagesNeedASignedInHuman(t *testing.T) {
	a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/threads", "/proposals", "/overdue", "/claims", "/tokens", "/threads/th_1", "/search?q=x"} {
		resp, err := client.Get(a.base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/signin?next=") {
			t.Fatalf("%s without a session: %d %s", path, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	resp, _ := client.Get(a.base + "/signin")
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Fatalf("CSP %q", csp)
	}
}

func TestPagesRenderTheForum(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		b := signedIn(t, a)
		alice, bob := a.token("alice"), a.token("bob")
		mod := a.token("mod", services.RightRead, services.RightWrite, services.RightLock)
		th := a.post(alice, map[string]any{"kind": "ask", "body": "<script>alert(1)</script> Which port?", "from": map[string]any{"extension": "w1"}}).str("thread", "id")
		a.post(bob, map[string]any{"kind": "answer", "thread": th, "body": "8443"})
		a.post(mod, map[string]any{"kind": "note", "thread": th, "body": "Moderator here."})
		other := a.post(bob, map[string]any{"kind": "ask", "body": "Unrelated"}).str("thread", "id")

		list := b.page("GET", "/threads", nil, 200)
		if n := list.Find(`[data-testid="thread-row"]`).Length(); n != 2 {
			t.Fatalf("%d thread rows", n)
		}
		row := list.Find(`[data-thread="` + th + `"]`)
		if row.Find(`[data-testid="state"]`).AttrOr("data-confirmed", "") != "false" || !strings.Contains(row.Text(), "turn: ainotes:alice") {
			t.Fatalf("row %q", row.Text())
		}
		filtered := b.page("GET", "/threads?unconfirmed=1", nil, 200)
		if ids := rowIDs(filtered); len(ids) != 1 || ids[0] != th {
			t.Fatalf("unconfirmed filter: %v", ids)
		}
		if ids := rowIDs(b.page("GET", "/threads?awaiting=me", nil, 200)); len(ids) != 1 || ids[0] != other {
			t.Fatalf("awaiting-me filter: %v", ids)
		}

		page := b.page("GET", "/threads/"+th, nil, 200)
		if page.Find("script").FilterFunction(func(_ int, s *goquery.Selection) bool { return !s.Is("[src]") }).Length() != 0 {
			t.Fatal("an inline script reached the page")
		}
		if !strings.Contains(page.Find(`[data-testid="thread-title"]`).Text(), "<script>alert(1)</script>") {
			t.Fatal("the body's markup must show as text")
		}
		if n := page.Find(`[data-testid="message"]`).Length(); n != 3 {
			t.Fatalf("%d messages", n)
		}
		if badge := page.Find(`[data-testid="ki-badge"]`).Text(); badge != "KI · mod" {
			t.Fatalf("lock holder badge %q", badge)
		}
		if n := page.Find(`[data-testid="tree"] > li > details > ol > li`).Length(); n != 2 {
			t.Fatalf("%d replies nested under the root", n)
		}
		if n := page.Find(`[data-testid="event"]`).Length(); n != 2 {
			t.Fatalf("%d events", n)
		}
		version := page.Find(`[data-testid="thread-live"]`).AttrOr("data-version", "")
		resp, _ := b.http.Get(a.base + "/threads/" + th + "/live?v=" + version)
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("unchanged thread polled: %d", resp.StatusCode)
		}
		a.post(bob, map[string]any{"kind": "note", "thread": th, "body": "news"})
		live := b.page("GET", "/threads/"+th+"/live?v="+version, nil, 200, "HX-Request", "true")
		if live.Find(`[data-testid="message"]`).Length() != 4 {
			t.Fatal("the live region did not bring the new message")
		}

		props := b.page("GET", "/proposals", nil, 200)
		if ids := props.Find(`[data-testid="proposal"]`); ids.Length() != 1 || ids.AttrOr("data-thread", "") != th {
			t.Fatalf("proposals %d", ids.Length())
		}
		row2 := b.page("POST", "/proposals/"+th+"/confirm", url.Values{"state": {"answered"}}, 200, "HX-Request", "true", "X-CSRF-Token", b.csrf)
		if row2.Find(`[data-testid="state"]`).AttrOr("data-confirmed", "") != "true" || row2.Find(`[data-testid="done"]`).Length() != 1 {
			t.Fatal("confirm did not answer with the confirmed row")
		}
		again := b.page("POST", "/proposals/"+th+"/confirm", url.Values{"state": {"answered"}}, 200, "HX-Request", "true", "X-CSRF-Token", b.csrf)
		if again.Find(`[data-testid="refusal"]`).Length() != 0 || again.Find(`[data-testid="state"]`).AttrOr("data-confirmed", "") != "true" {
			t.Fatal("a second confirm of the same state must answer the confirmed row, not a refusal")
		}
		refused := b.page("POST", "/proposals/"+th+"/confirm", url.Values{"state": {"decided"}}, 200, "HX-Request", "true", "X-CSRF-Token", b.csrf)
		if refused.Find(`[data-testid="refusal"]`).AttrOr("data-reason", "") != "state_changed" {
			t.Fatal("confirming a state that is not pending must show state_changed in place")
		}
	})
}

func rowIDs(doc *goquery.Document) []string {
	var ids []string
	doc.Find(`[data-testid="thread-row"]`).Each(func(_ int, s *goquery.Selection) { ids = append(ids, s.AttrOr("data-thread", "")) })
	return ids
}

func TestFormsCheckCSRF(t *testing.T) {
	a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	b := signedIn(t, a)
	th := a.post(a.token("alice"), map[string]any{"kind": "ask", "body": "q"}).str("thread", "id")
	doc := b.page("POST", "/threads/"+th+"/messages", url.Values{"kind": {"note"}, "body": {"forged"}}, 401)
	if doc.Find(`[data-testid="refusal"]`).AttrOr("data-reason", "") != "token_invalid" {
		t.Fatal("a form without the CSRF token must be refused")
	}
	b.page("POST", "/threads/"+th+"/messages", url.Values{"_csrf": {b.csrf}, "kind": {"note"}, "body": {"real"}}, 200)
	if n := len(a.ok(200, "GET", "/api/v1/threads/"+th, a.token("reader", services.RightRead), nil).get("messages", 0, "replies").([]any)); n != 1 {
		t.Fatalf("%d replies stored, want only the one with the token", n)
	}
}

// TestTokensPage: creating a token is post/redirect/get — the page after
// the redirect shows the secret once, and reloading it shows the list
// without creating another token; a token records its last use.
func TestTokensPage(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		b := signedIn(t, a)
		// The client follows the 303 to GET /tokens, as a browser does.
		doc := b.page("POST", "/tokens", url.Values{"_csrf": {b.csrf}, "handle": {"scout"}, "label": {"Scout"}, "rights": {"read", "write", "lock"}}, 200)
		secret := doc.Find(`[data-testid="token-secret"]`).AttrOr("value", "")
		if !strings.HasPrefix(secret, "prl_") {
			t.Fatalf("secret not shown: %q", secret)
		}
		rows := doc.Find(`[data-testid="token-row"]`).Length()
		if got := doc.Find(`[data-testid="last-used"]`).First().Text(); !strings.Contains(got, "never") {
			t.Fatalf("a new token's last use reads %q, want never", got)
		}
		me := a.ok(200, "GET", "/api/v1/me", secret, nil)
		if me.str("badge") != "KI · Scout" {
			t.Fatalf("created token: %s", me.raw)
		}
		list := b.page("GET", "/tokens", nil, 200)
		if strings.Contains(list.Text(), secret) || list.Find(`[data-testid="token-secret"]`).Length() != 0 {
			t.Fatal("the secret is shown again")
		}
		if n := list.Find(`[data-testid="token-row"]`).Length(); n != rows {
			t.Fatalf("a reload made %d tokens of %d", n, rows)
		}
		if got := list.Find(`[data-testid="last-used"]`).First().Find("time").Length(); got != 1 {
			t.Fatal("the token's use is not shown")
		}
		bad := b.page("POST", "/tokens", url.Values{"_csrf": {b.csrf}, "handle": {"Bad Handle"}, "label": {"kept"}, "rights": {"verify"}}, 400)
		if bad.Find(`[data-testid="refusal"]`).AttrOr("data-reason", "") != "invalid_body" {
			t.Fatal("a bad handle must be refused with its reason")
		}
		if bad.Find(`#handle`).AttrOr("value", "") != "Bad Handle" || bad.Find(`#label`).AttrOr("value", "") != "kept" ||
			bad.Find(`input[value="verify"]:checked`).Length() != 1 || bad.Find(`input[value="read"]:checked`).Length() != 0 {
			t.Fatal("a refused form must keep what was typed and checked")
		}
		id := list.Find(`[data-testid="token-row"]`).First().Find("td").First().Text()
		row := b.page("POST", "/tokens/"+id+"/revoke", url.Values{"_csrf": {b.csrf}}, 200, "HX-Request", "true")
		if row.Find(`[data-testid="revoked"]`).Length() != 1 {
			t.Fatal("revoke did not answer with the revoked row")
		}
		a.refused(services.TokenInvalid, "GET", "/api/v1/me", secret, nil)
	})
}

func TestFirstRunSetupLink(t *testing.T) {
	a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	link, err := a.forum.SetupLink(context.Background())
	if err != nil || link == "" {
		t.Fatal("no setup link", err)
	}
	jar, _ := cookiejar.New(nil)
	b := &browserless{t: t, a: a, http: &http.Client{Jar: jar}}
	b.page("GET", "/setup/wrong", nil, 401)
	form := b.page("GET", "/setup/"+link, nil, 200)
	token, _ := form.Find(`input[name="_csrf"]`).Attr("value")
	doc := b.page("POST", "/setup/"+link, url.Values{"_csrf": {token}, "name": {"ada"}, "password": {"correct horse battery"}}, 200)
	if doc.Find(`[data-testid="identity"]`).Text() != "human:ada" {
		t.Fatal("setup did not sign the new human in")
	}
	// A used link says so, keeps the signed-in navigation, and offers a
	// way on.
	used := b.page("GET", "/setup/"+link, nil, 401)
	if used.Find(`[data-testid="setup-used"]`).Length() != 1 || used.Find(`[data-testid="identity"]`).Text() != "human:ada" ||
		used.Find(`[data-testid="way-on"] a[href="/threads"]`).Length() != 1 {
		t.Fatal("the used setup link page lacks its explanation, the navigation or a way on")
	}
}

// TestModerationFollowsTheStateOfRecord: what the thread page offers a
// human follows the state of record (docs/protocol.md §5.2), not the proposal on
// top of it.
func TestModerationFollowsTheStateOfRecord(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		b := signedIn(t, a)
		alice, bob := a.token("alice"), a.token("bob")
		mod := a.token("mod", services.RightRead, services.RightWrite, services.RightLock)
		offers := func(th string) map[string]bool {
			page := b.page("GET", "/threads/"+th, nil, 200)
			out := map[string]bool{}
			for _, id := range []string{"confirm", "withdraw", "remark", "close-lock", "reopen"} {
				out[id] = page.Find(`[data-testid="moderation"] [data-testid="`+id+`"]`).Length() == 1
			}
			return out
		}
		want := func(th string, on ...string) {
			t.Helper()
			got := offers(th)
			for id, shown := range got {
				if shown != slices.Contains(on, id) {
					t.Fatalf("thread %s: %s shown=%v; want only %v", th, id, shown, on)
				}
			}
		}

		// A proposed close over an open record: confirm, turn down, re-mark,
		// close; no reopen (nothing is locked).
		th := a.post(alice, map[string]any{"kind": "ask", "body": "Done?"}).str("thread", "id")
		a.post(bob, map[string]any{"kind": "answer", "thread": th, "body": "Yes."})
		a.post(alice, map[string]any{"kind": "mark", "thread": th, "state": "closed", "body": "Closing."})
		want(th, "confirm", "withdraw", "remark", "close-lock")

		// A side state of record: re-mark and reopen.
		a.post(mod, map[string]any{"kind": "mark", "thread": th, "state": "deferred", "body": "Later."})
		want(th, "remark", "close-lock", "reopen")

		// A closed record with the creator's reopen pending: confirm it,
		// turn it down, or reopen; nothing else is accepted.
		a.post(mod, map[string]any{"kind": "reopen", "thread": th, "body": "Back."})
		a.post(bob, map[string]any{"kind": "answer", "thread": th, "body": "Still yes."})
		a.post(mod, map[string]any{"kind": "mark", "thread": th, "state": "closed", "body": "Closed."})
		a.post(alice, map[string]any{"kind": "reopen", "thread": th, "body": "One more thing."})
		want(th, "confirm", "withdraw", "reopen")
		page := b.page("GET", "/threads/"+th, nil, 200)
		if text := page.Find(`[data-testid="state-summary"]`).Text(); !strings.Contains(text, "closed · confirmed by KI · mod") || !strings.Contains(text, "proposed: open by ainotes:alice") {
			t.Fatalf("summary %q", text)
		}
		done := b.page("POST", "/threads/"+th+"/withdraw", url.Values{"state": {"closed"}, "proposal": {"open"}}, 200, "HX-Request", "true", "X-CSRF-Token", b.csrf)
		if done.Find(`[data-testid="done"]`).Length() != 1 {
			t.Fatalf("turning the reopen down: %s", done.Text())
		}
		want(th, "reopen")
	})
}

// TestReplyFormDefaultsToANote: a casual reply changes nothing — the form
// opens on note — and says what the chosen act would do before it is sent.
func TestReplyFormDefaultsToANote(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		b := signedIn(t, a)
		th := a.post(a.token("alice"), map[string]any{"kind": "ask", "body": "Which port?"}).str("thread", "id")
		page := b.page("GET", "/threads/"+th, nil, 200)
		if kind := page.Find(`#reply-kind option[selected]`).AttrOr("value", ""); kind != "note" {
			t.Fatalf("the reply form opens on %q", kind)
		}
		if effect := page.Find(`[data-testid="act-effect"]`).Text(); !strings.HasPrefix(effect, "Changes nothing") {
			t.Fatalf("effect %q", effect)
		}
		answer := page.Find(`#reply-kind option[value="answer"]`).AttrOr("data-effect", "")
		if answer != "Marks the thread answered and gives the turn to ainotes:alice." {
			t.Fatalf("the answer option says %q", answer)
		}
	})
}

// TestSignedInPagesAreNotStored: no cache keeps a signed-in page.
func TestSignedInPagesAreNotStored(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		b := signedIn(t, a)
		for _, path := range []string{"/threads", "/proposals", "/tokens"} {
			resp, err := b.http.Get(a.base + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
				t.Fatalf("%s: Cache-Control %q", path, cc)
			}
		}
	})
}
