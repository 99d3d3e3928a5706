package web_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"parley/services"
)

// TestClaimPages: a thread shows its claims with their evidence, acts,
// quorum and the acts the viewer may take; the claim form opens under the
// claim, quotes it, refuses in place and posts without JavaScript (the
// claim's page shows the outcome); /claims lists every claim by status and
// what verifiers work from.
func TestClaimPages(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		b := signedIn(t, a)
		alice, bob := a.token("alice"), a.token("bob")
		ada := a.token("ada-reader", services.RightRead)
		claim := a.post(alice, map[string]any{"kind": "assert", "body": "The index is used.", "evidence": []map[string]any{
			{"kind": "url", "ref": "https://x.example/plan?q=1"},
			{"kind": "other", "ref": "javascript:alert(1)"},
			{"kind": "hash", "ref": "sha256:abc", "note": "plan hash"},
		}})
		th, cl := claim.str("thread", "id"), claim.str("claim", "id")
		a.post(bob, map[string]any{"kind": "attest", "thread": th, "claim": cl, "body": "Same here.", "evidence": []map[string]any{{"kind": "log", "ref": "job 7"}}})
		tok, err := a.forum.CreateToken(context.Background(), services.TokenRequest{Human: "ada"})
		if err != nil {
			t.Fatal(err)
		}
		own := a.post(tok.Secret, map[string]any{"kind": "assert", "thread": th, "body": "Ada's own claim."}).str("claim", "id")

		page := b.page("GET", "/threads/"+th, nil, 200)
		card := page.Find(`[data-testid="claim"][data-claim="` + cl + `"]`)
		if card.AttrOr("data-status", "") != "supported" || card.Find(`[data-testid="attestation"]`).Length() != 1 {
			t.Fatalf("claim card: %q", card.Text())
		}
		links := card.Find(`[data-testid="evidence"]`).First().Find(`a[data-testid="proof-link"]`)
		if links.Length() != 1 || links.AttrOr("href", "") != "https://x.example/plan?q=1" || links.AttrOr("rel", "") != "noopener noreferrer nofollow" || links.AttrOr("target", "") != "_blank" {
			t.Fatalf("only the https ref is a link, opened safely: %d %v", links.Length(), links.Nodes)
		}
		if refs := texts(card.Find(`[data-testid="evidence"]`).First().Find(`[data-testid="proof-ref"]`)); !slices.Equal(refs, []string{"javascript:alert(1)", "sha256:abc"}) {
			t.Fatalf("other refs as text: %v", refs)
		}
		if acts := attrs(card.Find(`[data-testid="claim-act"]`), "data-act"); !slices.Equal(acts, []string{"attest", "refute", "verify"}) {
			t.Fatalf("a human is offered %v on a supported claim", acts)
		}
		if acts := attrs(page.Find(`[data-claim="`+own+`"] [data-testid="claim-act"]`), "data-act"); !slices.Equal(acts, []string{"refute"}) {
			t.Fatalf("on one's own claim a human is offered %v", acts)
		}
		if line := page.Find(`[data-kind="attest"] [data-testid="claim-line"]`).Text(); !strings.Contains(line, "attests "+cl) {
			t.Fatalf("the attest in the tree says %q", line)
		}

		// An act's button opens the form in place under the claim (htmx),
		// or without JavaScript on the claim's own page.
		button := card.Find(`[data-testid="claim-act"][data-act="verify"]`)
		if button.AttrOr("hx-target", "") != "#act-"+cl || card.Find(`#act-`+cl+`[data-testid="claim-slot"]`).Length() != 1 ||
			button.AttrOr("href", "") != "/claims/"+cl+"?act=verify#act-"+cl {
			t.Fatalf("the verify button does not open the form under the claim: %v", button.Nodes[0].Attr)
		}
		// The form, aimed at the claim, quoting its statement and status; a
		// refusal comes back in it with what was typed, under the claim.
		form := b.page("GET", "/threads/"+th+"/claim?claim="+cl+"&act=verify", nil, 200, "HX-Request", "true")
		if form.Find(`[data-testid="claim-form"]`).AttrOr("data-act", "") != "verify" ||
			!strings.Contains(form.Find(`[data-testid="claim-quote"]`).Text(), "The index is used.") ||
			form.Find(`[data-testid="claim-quote-status"]`).Text() != "supported" {
			t.Fatalf("the form is not aimed at verify, quoting the claim: %q", form.Text())
		}
		hx := []string{"HX-Request", "true", "X-CSRF-Token", b.csrf}
		refused := b.page("POST", "/threads/"+th+"/claim", url.Values{"claim": {cl}, "kind": {"verify"}, "body": {"Sealed."}, "evidence_kind": {"url"}}, 200, hx...)
		if refused.Find(`[data-testid="claim"][data-claim="`+cl+`"] [data-testid="claim-slot"] [data-testid="refusal"]`).AttrOr("data-reason", "") != "evidence_required" ||
			refused.Find(`#act-form-`+cl+`-body`).Text() != "Sealed." {
			t.Fatalf("no evidence: %q", refused.Text())
		}
		opinion := b.page("POST", "/threads/"+th+"/claim", url.Values{"claim": {cl}, "kind": {"verify"}, "body": {"Sealed."}, "evidence_kind": {"note"}, "evidence_note": {"trust me"}}, 200, hx...)
		if opinion.Find(`[data-testid="refusal"]`).AttrOr("data-reason", "") != "invalid_body" {
			t.Fatalf("an opinion as evidence: %q", opinion.Text())
		}
		// A first independent verifier: the claim stays supported, 1 of 2.
		vera := a.token("vera", services.RightRead, services.RightWrite, services.RightVerify)
		a.post(vera, map[string]any{"kind": "verify", "thread": th, "claim": cl, "body": "Checked the plan.", "evidence": []map[string]any{{"kind": "log", "ref": "explain 3"}}})
		page = b.page("GET", "/threads/"+th, nil, 200)
		quorum := page.Find(`[data-claim="` + cl + `"] [data-testid="quorum"]`)
		if quorum.AttrOr("data-have", "") != "1" || quorum.AttrOr("data-need", "") != "2" || quorum.Find(`[data-testid="quorum-text"]`).Text() != "1 of 2 independent verifiers" ||
			quorum.Find(`[data-testid="verification"][data-identity="ainotes:vera"] [data-testid="verifier-party"]`).Text() != "its own party" {
			t.Fatalf("the quorum's progress: %q", quorum.Text())
		}
		// The human, a second party, completes it without JavaScript: the
		// claim's page shows the form's outcome as the claim's status line.
		var resp *http.Response
		client := &http.Client{Jar: b.http.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err = client.PostForm(a.base+"/threads/"+th+"/claim", url.Values{"_csrf": {b.csrf}, "claim": {cl}, "kind": {"verify"}, "body": {"Sealed."}, "evidence_kind": {"url"}, "evidence_ref": {"https://x.example/run"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/claims/"+cl+"?posted=msg_") || !strings.HasSuffix(loc, "#act-"+cl) {
			t.Fatalf("a form posted without htmx: %d %s", resp.StatusCode, loc)
		}
		if got := a.ok(200, "GET", "/api/v1/claims/"+cl, ada, nil); got.str("claim", "status") != "verified" || got.str("claim", "verified_by", "by", "identity") != "human:ada" {
			t.Fatalf("after the form: %s", got.raw)
		}
		outcome := b.page("GET", loc, nil, 200).Find(`[data-claim="` + cl + `"] [data-testid="claim-slot"] [data-testid="claim-outcome"]`)
		if outcome.AttrOr("data-status", "") != "verified" || !strings.Contains(outcome.Text(), "You verified "+cl+": it is now verified, 2 of 2 independent verifiers.") {
			t.Fatalf("the status line after the post: %q", outcome.Text())
		}
		// Without JavaScript an act's button leads to the claim's page with
		// the form open under the claim.
		open := b.page("GET", "/claims/"+cl+"?act=refute", nil, 200)
		if open.Find(`[data-testid="claim"][data-claim="`+cl+`"] [data-testid="claim-slot"] [data-testid="claim-form"][data-act="refute"]`).Length() != 1 {
			t.Fatal("the claim's page with ?act= has no form under the claim")
		}
		page = b.page("GET", "/threads/"+th+"?claim="+cl+"&act=refute", nil, 200)
		if page.Find(`[data-testid="verified-by"]`).Length() != 1 || page.Find(`aside [data-testid="claim-form"][data-act="refute"]`).Length() != 1 {
			t.Fatal("the thread page with ?claim= shows the seal and the form aimed at the claim")
		}

		// A reference to a claim leads to its page, which leads to its
		// thread; the claims page lists refutations and is in the
		// navigation.
		ownPage := b.page("GET", "/claims/"+own, nil, 200)
		if ownPage.Find(`[data-testid="claim"][data-claim="`+own+`"] [data-testid="statement"]`).Text() != "Ada's own claim." ||
			ownPage.Find(`[data-testid="claim-thread-link"]`).AttrOr("href", "") != "/threads/"+th+"#"+own {
			t.Fatalf("/claims/%s: %q", own, ownPage.Text())
		}
		a.post(bob, map[string]any{"kind": "refute", "thread": th, "claim": cl, "body": "Not after the migration.", "evidence": []map[string]any{{"kind": "commit", "ref": "9e1f"}}})
		board := b.page("GET", "/claims", nil, 200)
		if board.Find(`nav a[href="/claims"][aria-current="page"]`).Length() != 1 {
			t.Fatal("the claims page is not in the navigation")
		}
		if r := board.Find(`[data-testid="newest-refutations"] [data-testid="refutation"]`); r.Length() != 1 || r.AttrOr("data-claim", "") != cl {
			t.Fatalf("newest refutations: %q", r.Text())
		}
		if board.Find(`[data-testid="sealable"] [data-testid="claim"]`).Length() != 0 {
			t.Fatal("a refuted claim waits for a seal")
		}
		// Every claim, filterable by status (issue 29 item 7).
		if rows := attrs(board.Find(`[data-testid="all-claims"] [data-testid="claim-row"]`), "data-claim"); !slices.Equal(rows, []string{own, cl}) {
			t.Fatalf("every claim: %v, want %v", rows, []string{own, cl})
		}
		unverified := b.page("GET", "/claims?status=unverified", nil, 200)
		if rows := attrs(unverified.Find(`[data-testid="all-claims"] [data-testid="claim-row"]`), "data-claim"); !slices.Equal(rows, []string{own}) ||
			unverified.Find(`[data-testid="claim-filter"][aria-current="true"]`).AttrOr("data-status", "") != "unverified" {
			t.Fatalf("unverified claims: %v", rows)
		}
		if none := b.page("GET", "/claims?status=verified", nil, 200); none.Find(`[data-testid="no-claims"]`).Length() != 1 {
			t.Fatal("no verified claim, and the page does not say so")
		}
		b.page("GET", "/claims?status=sealed", nil, 400)
		version := board.Find(`[data-testid="claim-board"]`).AttrOr("data-version", "")
		if resp, _ := b.http.Get(a.base + "/claims/live?v=" + version); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("unchanged board polled: %d", resp.StatusCode)
		}
		b.page("GET", "/claims/cl_99", nil, 404)

		// The reply form offers assert: a human states a claim in the thread.
		reply := b.page("GET", "/threads/"+th, nil, 200)
		if reply.Find(`#reply-kind option[value="assert"]`).Length() != 1 {
			t.Fatal("the reply form does not offer assert")
		}
		b.page("POST", "/threads/"+th+"/messages", url.Values{"kind": {"assert"}, "body": {"Ada claims this."}}, 200, hx...)
		last := a.ok(200, "GET", "/api/v1/claims?thread="+th+"&limit=1", ada, nil)
		if last.str("claims", 0, "statement") != "Ada claims this." || last.str("claims", 0, "claimant", "identity") != "human:ada" {
			t.Fatalf("a claim asserted from the reply form: %s", last.raw)
		}
	})
}

func texts(s *goquery.Selection) []string {
	var out []string
	s.Each(func(_ int, e *goquery.Selection) { out = append(out, e.Text()) })
	return out
}

func attrs(s *goquery.Selection, name string) []string {
	var out []string
	s.Each(func(_ int, e *goquery.Selection) { out = append(out, e.AttrOr(name, "")) })
	return out
}
