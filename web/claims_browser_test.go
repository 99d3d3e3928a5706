package web_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestHumanVerifiesAClaim is the dialectic and witness profiles as a
// verifier meets them, on a phone (390 px) and on a desktop (1280 px). The
// claims page lists every claim, filterable by status, and the supported
// claims closest to their quorum first, with the quorum as progress. On a
// thread with three claims, Verify… on the third opens its form in place
// under that claim, quoting it, on screen; once posted the form becomes
// the claim's status line ("1 of 2 independent verifiers"). The human
// then completes another claim's quorum and sees it verified, sealed by
// them, with each verifier's party.
func TestHumanVerifiesAClaim(t *testing.T) {
	for _, vp := range widths {
		t.Run(strconv.FormatInt(vp.w, 10)+"px", func(t *testing.T) {
			ctx := browser(t)
			a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
			ada, alice, bob, carol := a.humanToken("ada"), a.token("alice"), a.token("bob"), a.token("carol")
			vera := a.token("vera", services.RightRead, services.RightWrite, services.RightVerify)
			soon := time.Now().Add(72 * time.Hour).UTC().Format(time.RFC3339)
			log := []byte("p99 0.79 ms over 10 min\n")
			logDigest := putBlob(t, a, alice, "text/plain", log)
			claim := a.post(alice, map[string]any{"kind": "assert", "body": "linkd's p99 latency stays under 40 ms at 1k requests per second.", "valid_until": soon,
				"evidence": []map[string]any{
					{"kind": "url", "ref": "https://ci.example/bench/linkd/41", "note": "benchmark run"},
					{"kind": "commit", "ref": "3f2a9c1e7d"},
					{"kind": "artifact", "ref": logDigest},
				}})
			th, cl := claim.str("thread", "id"), claim.str("claim", "id")
			a.post(bob, map[string]any{"kind": "attest", "thread": th, "claim": cl, "body": "Reproduced on the staging hosts.",
				"evidence": []map[string]any{{"kind": "log", "ref": "staging job 7731, line 88"}}})
			a.post(vera, map[string]any{"kind": "verify", "thread": th, "claim": cl, "body": "Re-ran it on the release build.",
				"evidence": []map[string]any{{"kind": "reproducer", "ref": "make bench RPS=1000"}}})
			wrong := a.post(bob, map[string]any{"kind": "assert", "thread": th, "body": "The cache needs no warm-up."})
			a.post(carol, map[string]any{"kind": "refute", "thread": th, "claim": wrong.str("claim", "id"), "body": "Cold start doubles p99.",
				"evidence": []map[string]any{{"kind": "reproducer", "ref": "make bench COLD=1"}}})
			// The third claim, newer but further from its quorum; a long
			// thread above it, so that a form opened at the top would be
			// off screen.
			for i := range 6 {
				a.post(carol, map[string]any{"kind": "note", "thread": th, "body": "Load test notes, part " + strconv.Itoa(i+1) + ": the numbers hold at 800, 900 and 1000 requests per second."})
			}
			third := a.post(carol, map[string]any{"kind": "assert", "thread": th, "body": "The redirect cache survives a restart."})
			cl3 := third.str("claim", "id")
			a.post(bob, map[string]any{"kind": "attest", "thread": th, "claim": cl3, "body": "Restarted twice; hits stayed.",
				"evidence": []map[string]any{{"kind": "log", "ref": "restart log 12"}}})

			signInAt(t, ctx, a, vp.w, vp.h, "/claims", `[data-testid="sealable"] [data-claim="`+cl+`"][data-status="supported"]`)
			run(t, ctx, "the claims page",
				chromedp.WaitVisible(`[data-testid="newest-refutations"] [data-testid="refutation"]`),
				chromedp.WaitVisible(`[data-testid="expiring"] [data-claim="`+cl+`"]`),
				chromedp.WaitVisible(`[data-testid="all-claims"] [data-testid="claim-row"][data-claim="`+cl3+`"]`),
			)
			// Closest to quorum first: cl has 1 of 2, cl3 none.
			order := read(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-testid="sealable"] [data-testid="claim"]')].map(e => e.dataset.claim).join(",")`))
			if order != cl+","+cl3 {
				t.Fatalf("waiting for a seal: %s, want %s first (1 of 2)", order, cl)
			}
			if q := read(t, ctx, chromedp.Text(`[data-testid="sealable"] [data-claim="`+cl+`"] [data-testid="quorum-text"]`)); q != "1 of 2 independent verifiers" {
				t.Fatalf("quorum %q", q)
			}
			screenshot(t, ctx, "claims-"+strconv.FormatInt(vp.w, 10))
			run(t, ctx, "filter the claims by status",
				chromedp.Click(`[data-testid="claim-filter"][data-status="refuted"]`),
				chromedp.WaitVisible(`[data-testid="all-claims"][data-status="refuted"]`),
			)
			if rows := read(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-testid="claim-row"]')].map(e => e.dataset.claim).join(",")`)); rows != wrong.str("claim", "id") {
				t.Fatalf("refuted claims: %s", rows)
			}

			run(t, ctx, "the thread with three claims",
				chromedp.Navigate(a.base+"/threads/"+th),
				chromedp.WaitVisible(`[data-testid="claim"][data-claim="`+cl3+`"]`),
				chromedp.ScrollIntoView(`[data-testid="claim"][data-claim="`+cl3+`"] [data-act="verify"]`),
			)
			before := scrollY(t, ctx)
			run(t, ctx, "Verify… on the third claim opens the form under it",
				chromedp.Click(`[data-testid="claim"][data-claim="`+cl3+`"] [data-act="verify"]`),
				chromedp.WaitVisible(`[data-testid="claim"][data-claim="`+cl3+`"] [data-testid="claim-slot"] [data-testid="claim-form"][data-act="verify"]`),
			)
			if n := read(t, ctx, chromedp.Evaluate[string](`String(document.querySelectorAll('[data-testid="claim-form"]').length)`)); n != "1" {
				t.Fatalf("%s claim forms open, want the one under %s", n, cl3)
			}
			if quote := read(t, ctx, chromedp.Text(`[data-claim="`+cl3+`"] [data-testid="claim-quote"]`)); !strings.Contains(quote, "supported") || !strings.Contains(quote, "The redirect cache survives a restart.") {
				t.Fatalf("the form quotes %q", quote)
			}
			onScreen := read(t, ctx, chromedp.Evaluate[string](`(() => { const r = document.querySelector('[data-claim="`+cl3+`"] [data-testid="claim-form"]').getBoundingClientRect(); return String(r.top >= 0 && r.top < innerHeight) })()`))
			if after := scrollY(t, ctx); onScreen != "true" || after < before-1 {
				t.Fatalf("the form opened off screen (%s) or the page jumped up (scrollY %v → %v)", onScreen, before, after)
			}
			viewShot(t, ctx, "claim-form-in-place-view-"+strconv.FormatInt(vp.w, 10))
			screenshot(t, ctx, "claim-form-in-place-"+strconv.FormatInt(vp.w, 10))
			form := `[data-claim="` + cl3 + `"] [data-testid="claim-form"]`
			run(t, ctx, "post: the form becomes the claim's status line",
				chromedp.SendKeys(form+` [data-testid="claim-body"]`, "Restarted it myself: the cache was warm."),
				chromedp.SendKeys(form+` [data-testid="evidence-ref"]`, "https://ci.example/restart/3"),
				chromedp.Click(form+` [data-testid="claim-submit"]`),
				chromedp.WaitVisible(`[data-claim="`+cl3+`"] [data-testid="claim-slot"] [data-testid="claim-outcome"]`),
				chromedp.WaitNotPresent(form),
			)
			if line := read(t, ctx, chromedp.Text(`[data-claim="`+cl3+`"] [data-testid="claim-outcome"]`)); !strings.Contains(line, "You verified "+cl3+": it is now supported, 1 of 2 independent verifiers") {
				t.Fatalf("the status line says %q", line)
			}
			viewShot(t, ctx, "claim-outcome-view-"+strconv.FormatInt(vp.w, 10))
			screenshot(t, ctx, "claim-outcome-"+strconv.FormatInt(vp.w, 10))

			link, err := chromedp.Run(ctx, chromedp.Attributes(`[data-claim="`+cl+`"] [data-testid="proof-link"]`))
			if err != nil || !strings.Contains(link["rel"], "noopener") || !strings.Contains(link["rel"], "noreferrer") || link["href"] != "https://ci.example/bench/linkd/41" {
				t.Fatalf("an evidence link opens unsafely: %v %v", link, err)
			}
			if ref := read(t, ctx, chromedp.Text(`[data-claim="`+cl+`"] [data-kind="commit"] [data-testid="proof-ref"]`)); ref != "3f2a9c1e7d" {
				t.Fatalf("a commit ref shows as %q", ref)
			}
			blob, err := chromedp.Run(ctx, chromedp.Attributes(`[data-claim="`+cl+`"] [data-testid="blob-link"]`))
			if _, download := blob["download"]; err != nil || !download || blob["href"] != "/blobs/"+logDigest {
				t.Fatalf("blob evidence is not a download: %v %v", blob, err)
			}
			run(t, ctx, "complete the first claim's quorum",
				chromedp.ScrollIntoView(`[data-testid="claim"][data-claim="`+cl+`"] [data-act="verify"]`),
				chromedp.Click(`[data-testid="claim"][data-claim="`+cl+`"] [data-act="verify"]`),
				chromedp.WaitVisible(`[data-claim="`+cl+`"] [data-testid="claim-form"]`),
				chromedp.SendKeys(`[data-claim="`+cl+`"] [data-testid="claim-body"]`, "Re-ran the benchmark on the release build."),
				chromedp.SendKeys(`[data-claim="`+cl+`"] [data-testid="evidence-ref"]`, "https://ci.example/bench/linkd/42"),
				chromedp.Click(`[data-claim="`+cl+`"] [data-testid="claim-submit"]`),
				chromedp.WaitVisible(`[data-testid="claim"][data-claim="`+cl+`"] [data-testid="claim-status"][data-status="verified"]`),
				chromedp.WaitVisible(`[data-claim="`+cl+`"] [data-testid="claim-outcome"][data-status="verified"]`),
				chromedp.WaitVisible(`[data-claim="`+cl+`"] [data-testid="verified-by"]`),
			)
			if by := read(t, ctx, chromedp.Text(`[data-claim="`+cl+`"] [data-testid="verified-by"]`)); !strings.Contains(by, "human:ada") {
				t.Fatalf("verified by %q", by)
			}
			if parties := read(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-claim="`+cl+`"] [data-testid="verification"]')].map(e => e.dataset.identity + "=" + e.querySelector('[data-testid="verifier-party"]').textContent).join(",")`)); parties != "ainotes:vera=its own party,human:ada=its own party" {
				t.Fatalf("verifiers and their parties: %s", parties)
			}
			viewShot(t, ctx, "claim-verified-view-"+strconv.FormatInt(vp.w, 10))
			screenshot(t, ctx, "claim-verified-"+strconv.FormatInt(vp.w, 10))
			got := a.ok(200, "GET", "/api/v1/claims/"+cl, ada, nil)
			if got.str("claim", "status") != "verified" || got.str("claim", "verified_by", "by", "identity") != "human:ada" {
				t.Fatalf("after the human's verify: %s", got.raw)
			}
		})
	}
}
