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

// TestHumanVerifiesAClaim is the dialectic profile as a verifier meets it,
// on a phone (390 px) and on a desktop (1280 px): the claims page lists a
// supported claim waiting for a seal; the human opens it in its thread,
// verifies it with a pointer as evidence, and sees its status change to
// verified, sealed by them.
func TestHumanVerifiesAClaim(t *testing.T) {
	for _, width := range []int64{390, 1280} {
		t.Run(strconv.FormatInt(width, 10)+"px", func(t *testing.T) {
			ctx := browser(t)
			a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
			ada, alice, bob, carol := a.humanToken("ada"), a.token("alice"), a.token("bob"), a.token("carol")
			soon := time.Now().Add(72 * time.Hour).UTC().Format(time.RFC3339)
			claim := a.post(alice, map[string]any{"kind": "assert", "body": "linkd's p99 latency stays under 40 ms at 1k requests per second.", "valid_until": soon,
				"evidence": []map[string]any{
					{"kind": "url", "ref": "https://ci.example/bench/linkd/41", "note": "benchmark run"},
					{"kind": "commit", "ref": "3f2a9c1e7d"},
				}})
			th, cl := claim.str("thread", "id"), claim.str("claim", "id")
			a.post(bob, map[string]any{"kind": "attest", "thread": th, "claim": cl, "body": "Reproduced on the staging hosts.",
				"evidence": []map[string]any{{"kind": "log", "ref": "staging job 7731, line 88"}}})
			wrong := a.post(bob, map[string]any{"kind": "assert", "thread": th, "body": "The cache needs no warm-up."})
			a.post(carol, map[string]any{"kind": "refute", "thread": th, "claim": wrong.str("claim", "id"), "body": "Cold start doubles p99.",
				"evidence": []map[string]any{{"kind": "reproducer", "ref": "make bench COLD=1"}}})

			run(t, ctx, "sign in to the claims page",
				chromedp.EmulateViewport(width, 844),
				chromedp.Navigate(a.base+"/claims"),
				chromedp.WaitVisible(`[data-testid="signin-form"]`),
				chromedp.SendKeys(`#name`, "ada"),
				chromedp.SendKeys(`#password`, "correct horse battery"),
				chromedp.Submit(`[data-testid="signin-form"]`),
				chromedp.WaitVisible(`[data-testid="sealable"] [data-claim="`+cl+`"][data-status="supported"]`),
				chromedp.WaitVisible(`[data-testid="newest-refutations"] [data-testid="refutation"]`),
				chromedp.WaitVisible(`[data-testid="expiring"] [data-claim="`+cl+`"]`),
			)
			screenshot(t, ctx, "claims-"+strconv.FormatInt(width, 10))
			run(t, ctx, "open the claim to verify it",
				chromedp.Click(`[data-testid="sealable"] [data-claim="`+cl+`"] [data-act="verify"]`),
				chromedp.WaitVisible(`[data-testid="claim-form"][data-claim="`+cl+`"][data-act="verify"]`),
				chromedp.WaitVisible(`[data-testid="claim"][data-claim="`+cl+`"] [data-testid="claim-status"][data-status="supported"]`),
			)
			link, err := chromedp.Run(ctx, chromedp.Attributes(`[data-claim="`+cl+`"] [data-testid="proof-link"]`))
			if err != nil || !strings.Contains(link["rel"], "noopener") || !strings.Contains(link["rel"], "noreferrer") || link["href"] != "https://ci.example/bench/linkd/41" {
				t.Fatalf("an evidence link opens unsafely: %v %v", link, err)
			}
			if ref := read(t, ctx, chromedp.Text(`[data-claim="`+cl+`"] [data-kind="commit"] [data-testid="proof-ref"]`)); ref != "3f2a9c1e7d" {
				t.Fatalf("a commit ref shows as %q", ref)
			}
			run(t, ctx, "verify with evidence",
				chromedp.SendKeys(`#claim-body`, "Re-ran the benchmark on the release build."),
				chromedp.SetValue(`#evidence-kind`, "url"),
				chromedp.SendKeys(`#evidence-ref`, "https://ci.example/bench/linkd/42"),
				chromedp.Click(`[data-testid="claim-submit"]`),
				chromedp.WaitVisible(`[data-testid="claim-form"] [data-testid="posted"]`),
				chromedp.WaitVisible(`[data-testid="claim"][data-claim="`+cl+`"] [data-testid="claim-status"][data-status="verified"]`),
				chromedp.WaitVisible(`[data-claim="`+cl+`"] [data-testid="verified-by"]`),
			)
			if by := read(t, ctx, chromedp.Text(`[data-claim="`+cl+`"] [data-testid="verified-by"]`)); !strings.Contains(by, "human:ada") {
				t.Fatalf("verified by %q", by)
			}
			screenshot(t, ctx, "claim-verified-"+strconv.FormatInt(width, 10))
			got := a.ok(200, "GET", "/api/v1/claims/"+cl, ada, nil)
			if got.str("claim", "status") != "verified" || got.str("claim", "verified_by", "by", "identity") != "human:ada" {
				t.Fatalf("after the human's verify: %s", got.raw)
			}
		})
	}
}
