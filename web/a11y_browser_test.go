package web_test

import (
	"context"
	_ "embed"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"parley/migrations/dbtest"
)

// axeSource is axe-core, vendored by `npm run vendor` (package.json pins
// its version): the accessibility rules every page must pass.
//
//go:embed testdata/axe.min.js
var axeSource string

// uiPage is one page of the web UI as the accessibility test visits it.
// path may name the fixture's {thread}, {message}, {claim} and {setup};
// ready is what shows once the page is there.
type uiPage struct {
	name, path, ready string
}

// The pages anyone may see, before anyone signs in (the setup link is
// still unused), and the pages of a signed-in human. A new page is one line.
var (
	signedOutPages = []uiPage{
		{"signin", "/signin", `[data-testid="signin-form"]`},
		{"setup", "/setup/{setup}", `[data-testid="setup-form"]`},
		{"not-found-signed-out", "/no/such/page", `[data-testid="way-on"]`},
	}
	signedInPages = []uiPage{
		{"threads", "/threads", `[data-testid="thread-row"]`},
		{"thread", "/threads/{thread}", `[data-testid="tree"]`},
		{"thread-deep", "/threads/{deep}", `[data-testid="tree"]`},
		{"thread-closed", "/threads/{closed}", `[data-testid="thread-banner"]`},
		{"new-thread", "/threads/new", `[data-testid="new-thread-form"]`},
		{"reply-form", "/threads/{thread}?parent={message}#reply", `[data-testid="reply-form"]`},
		{"claim-form", "/threads/{claimthread}?claim={claim}&act=attest#reply", `[data-testid="claim-form"]`},
		{"proposals", "/proposals", `[data-testid="proposal"]`},
		{"overdue", "/overdue", `[data-testid="overdue"]`},
		{"claims", "/claims", `[data-testid="claim-board"]`},
		{"claim", "/claims/{claim}", `[data-testid="claim"]`},
		{"claim-act", "/claims/{claim}?act=verify#act-{claim}", `[data-testid="claim-slot"] [data-testid="claim-form"]`},
		{"claims-filtered", "/claims?status=supported", `[data-testid="all-claims"][data-status="supported"]`},
		{"search", "/search?q=port", `[data-testid="hit"]`},
		{"tokens", "/tokens", `[data-testid="token-table"]`},
		{"setup-used", "/setup/{setup}", `[data-testid="setup-used"]`},
		{"not-found", "/no/such/page", `[data-testid="way-on"]`},
	}
	// The widths every page is checked at: a phone and a desktop.
	viewports = []struct{ w, h int64 }{{390, 844}, {1280, 900}}
)

// TestEveryPageIsAccessible visits every page of the web UI in Chromium at
// 390×844 and 1280×900: it writes a screenshot of each to
// $PARLEY_SCREENSHOTS, requires that nothing scrolls sideways on the phone,
// and runs axe-core, which must find no violation.
func TestEveryPageIsAccessible(t *testing.T) {
	clk := &movable{t: time.Now().UTC().Truncate(time.Second)}
	a := startServer(t, dbtest.Fresh(t, "sqlite"), guardConfig(clk))
	setup, err := a.forum.SetupLink(t.Context())
	if err != nil || setup == "" {
		t.Fatal("no setup link", err)
	}
	alice, bob := a.token("alice"), a.token("bob")
	ask := a.post(alice, map[string]any{"kind": "ask", "body": "Which port should linkd listen on in staging?"})
	th := ask.str("thread", "id")
	a.post(bob, map[string]any{"kind": "answer", "thread": th, "body": "Port 8443: 443 belongs to the proxy, and linkd.conf names 8443."})
	claim := a.post(alice, map[string]any{"kind": "assert", "body": "linkd's p99 latency stays under 40 ms at 1k requests per second.",
		"evidence": []map[string]any{{"kind": "url", "ref": "https://ci.example/bench/linkd/41", "note": "benchmark run"}}})
	a.post(bob, map[string]any{"kind": "attest", "thread": claim.str("thread", "id"), "claim": claim.str("claim", "id"),
		"body": "Reproduced on the staging hosts.", "evidence": []map[string]any{{"kind": "log", "ref": "staging job 7731, line 88"}}})
	a.post(alice, map[string]any{"kind": "ask", "to": map[string]any{"identity": "ainotes:bob"}, "reply_by": clk.now().Add(time.Hour).Format(time.RFC3339),
		"body": "Is the mirror in sync with production? The release waits for it."})
	// A deep thread with Markdown bodies, and a thread a human closed.
	deep := a.post(alice, map[string]any{"kind": "ask", "body": "How deep can a review go?"})
	parent := deep.str("message", "id")
	kay := a.humanToken("kay") // a human in the chain: the guard would pause four models in a row
	for i := range 12 {
		who := []string{bob, alice, kay}[i%3]
		parent = a.post(who, map[string]any{"kind": "note", "thread": deep.str("thread", "id"), "parent": parent,
			"body": "Level " + strconv.Itoa(i+1) + ": see `linkd.conf` and https://example.org/runbook\n\n```\nlisten 8443 # a long line that must scroll inside its block and never widen the page\n```"}).str("message", "id")
	}
	closed := a.post(bob, map[string]any{"kind": "ask", "body": "Rotate the staging keys?"}).str("thread", "id")
	a.post(kay, map[string]any{"kind": "mark", "thread": closed, "state": "closed", "body": "Settled on Monday."})
	clk.advance(3 * time.Hour)
	fill := strings.NewReplacer("{deep}", deep.str("thread", "id"), "{closed}", closed,
		"{thread}", th, "{message}", ask.str("message", "id"), "{setup}", setup,
		"{claimthread}", claim.str("thread", "id"), "{claim}", claim.str("claim", "id"))

	for _, vp := range viewports {
		t.Run("signed-out/"+strconv.FormatInt(vp.w, 10), func(t *testing.T) {
			ctx := browser(t)
			for _, p := range signedOutPages {
				checkPage(t, ctx, a.base+fill.Replace(p.path), p, vp.w, vp.h)
			}
		})
	}
	if _, err := a.forum.CompleteSetup(t.Context(), setup, "ada", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	for _, vp := range viewports {
		t.Run("signed-in/"+strconv.FormatInt(vp.w, 10), func(t *testing.T) {
			ctx := browser(t)
			run(t, ctx, "sign in",
				chromedp.EmulateViewport(vp.w, vp.h),
				chromedp.Navigate(a.base+"/signin"),
				chromedp.WaitVisible(`[data-testid="signin-form"]`),
				chromedp.SendKeys(`#name`, "ada"),
				chromedp.SendKeys(`#password`, "correct horse battery"),
				chromedp.Submit(`[data-testid="signin-form"]`),
				chromedp.WaitVisible(`[data-testid="identity"]`),
			)
			for _, p := range signedInPages {
				checkPage(t, ctx, a.base+fill.Replace(p.path), p, vp.w, vp.h)
			}
		})
	}
}

// checkPage opens one page at one size, screenshots it, and checks it.
// Failures are reported per page, and the visit goes on to the next.
func checkPage(t *testing.T, ctx context.Context, url string, p uiPage, w, h int64) {
	t.Helper()
	run(t, ctx, "open "+p.name,
		chromedp.EmulateViewport(w, h),
		chromedp.Navigate(url),
		chromedp.WaitVisible(p.ready),
	)
	screenshot(t, ctx, "page-"+p.name+"-"+strconv.FormatInt(w, 10))
	if w <= 390 {
		if wide := read(t, ctx, chromedp.Evaluate[string](overflowScript)); wide != "" {
			t.Errorf("%s at %d px scrolls sideways: %s", p.name, w, wide)
		}
	}
	for _, v := range axeViolations(t, ctx) {
		t.Errorf("%s at %d px: axe %s (%s): %s\n    %s", p.name, w, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n    "))
	}
}

// overflowScript names what sticks out on the right of the viewport, or
// says nothing when the page does not scroll sideways.
const overflowScript = `(() => {
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth <= width) return "";
  const out = [];
  for (const el of document.querySelectorAll("body *")) {
    const r = el.getBoundingClientRect();
    if (r.right > width + 0.5 && out.length < 8) {
      out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
        (typeof el.className === "string" && el.className ? "." + el.className.trim().split(/\s+/).join(".") : "") +
        " (right " + Math.round(r.right) + ")");
    }
  }
  return "scrollWidth " + document.documentElement.scrollWidth + " > " + width + ": " + out.join(", ");
})()`

// axeViolation is one rule axe found broken, with the nodes that break it.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// axeViolations injects axe-core into the page (DevTools evaluation is not
// bound by the page's Content-Security-Policy) and runs it.
func axeViolations(t *testing.T, ctx context.Context) []axeViolation {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](axeSource+";\ntrue")); err != nil {
		t.Fatalf("inject axe: %v", err)
	}
	const runAxe = `axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations.map(v => ({
  id: v.id, impact: v.impact || "", help: v.help,
  nodes: v.nodes.map(n => n.target.join(" ") + ": " + (n.failureSummary || "").replace(/\s+/g, " ")),
})))`
	vs, err := chromedp.Run(ctx, chromedp.Evaluate[[]axeViolation](runAxe, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("run axe: %v", err)
	}
	return vs
}
