package web_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"parley/internal/testkit"
	"parley/migrations/dbtest"
	"parley/services"
)

// The bounds of the browser tests. Nothing waits for a fixed time: every
// step waits for what it brings to show, and these bounds fire only when
// it never does (a real hang), however slow and loaded the machine.
const (
	browserBudget = 5 * time.Minute // one test's browser, from start to end
	stepBudget    = time.Minute     // one step (run, read): its actions and waits
	lookBudget    = 10 * time.Second
)

// browser starts Debian's headless Chromium for one test, or skips (fails
// in CI) when it is not installed. The context it returns ends after
// browserBudget.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		testkit.Missing(t, "the browser tests", "chromium is not on PATH (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		// A loaded machine starts Chromium slowly (the default gives up
		// after 20 s).
		chromedp.WSURLReadTimeout(stepBudget),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first run starts the browser, which lives as long as the context
	// of that run: it has no deadline, so that when the test's ends the
	// browser can still say where the page was (failAt).
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(tab, browserBudget)
	t.Cleanup(cancelTimeout)
	return ctx
}

// screenshot writes a full-page PNG (quality 100 means PNG) into $PARLEY_SCREENSHOTS, when set.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("PARLEY_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs one step: actions that end by waiting for what they bring. It
// fails when the step does not finish within stepBudget.
func run(t *testing.T, ctx context.Context, step string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	bounded, cancel := context.WithTimeout(ctx, stepBudget)
	defer cancel()
	if err := chromedp.Do(bounded, actions...); err != nil {
		failAt(t, ctx, step, err)
	}
}

// until waits for a JavaScript condition to hold, within the step's bound
// (run).
func until(js string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(0))
}

// read returns what an action reads from the page (waiting, as chromedp's
// queries do, for the element to be there), within stepBudget.
func read(t *testing.T, ctx context.Context, a chromedp.Action[string]) string {
	t.Helper()
	bounded, cancel := context.WithTimeout(ctx, stepBudget)
	defer cancel()
	v, err := chromedp.Run(bounded, a)
	if err != nil {
		failAt(t, ctx, "read", err)
	}
	return v
}

// failAt fails the test, saying where the page was: its address and what
// it showed. It asks the browser with a context of its own, as ctx may
// have ended.
func failAt(t *testing.T, ctx context.Context, step string, err error) {
	t.Helper()
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("gave up waiting (a step may take %v, a test's browser %v): %w", stepBudget, browserBudget, err)
	}
	look, cancel := context.WithTimeout(context.WithoutCancel(ctx), lookBudget)
	defer cancel()
	html, _ := chromedp.Run(look, chromedp.OuterHTML("main"))
	url, _ := chromedp.Run(look, chromedp.Location())
	screenshot(t, look, "failed")
	t.Fatalf("%s: %v\nat %s:\n%s", step, err, url, html)
}

// TestHumanInTheBrowser walks what docs/protocol.md gives humans, in Chromium:
// sign in, read a thread the agents made over the API, answer as the
// human, confirm a model's proposal, close and lock, be refused on the
// locked thread, and reopen.
func TestHumanInTheBrowser(t *testing.T) {
	ctx := browser(t)
	a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	if err := a.forum.AddUser(context.Background(), "ada", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	alice, bob := a.token("alice"), a.token("bob")
	ask := a.post(alice, map[string]any{"kind": "ask", "body": "Which port should linkd listen on?"})
	th := ask.str("thread", "id")
	answer := a.post(bob, map[string]any{"kind": "answer", "thread": th, "body": "8443: 443 belongs to the proxy. <b>not bold</b>"}).str("message", "id")
	a.post(alice, map[string]any{"kind": "decide", "thread": th, "body": "8443 it is."})

	run(t, ctx, "sign in",
		chromedp.Navigate(a.base+"/threads"),
		chromedp.WaitVisible(`[data-testid="signin-form"]`),
		chromedp.SendKeys(`#name`, "ada"),
		chromedp.SendKeys(`#password`, "correct horse battery"),
		chromedp.Submit(`[data-testid="signin-form"]`),
		chromedp.WaitVisible(`[data-testid="thread-row"]`),
	)
	if text := read(t, ctx, chromedp.Text(`[data-testid="identity"]`)); text != "human:ada" {
		t.Fatalf("signed in as %q", text)
	}
	run(t, ctx, "open the thread",
		chromedp.Click(`[data-testid="thread-row"] a.title`),
		chromedp.WaitVisible(`[data-testid="tree"]`),
	)
	if text := read(t, ctx, chromedp.Text(`[data-kind="answer"] [data-testid="body"]`)); !strings.Contains(text, "<b>not bold</b>") {
		t.Fatalf("message HTML must show as text, got %q", text)
	}
	run(t, ctx, "answer as the human",
		chromedp.Click(`[data-kind="answer"] [data-testid="reply-button"]`),
		// Wait for the form aimed at that message, so nothing is typed into
		// the form it replaces.
		// (The form opens in place under the message.)
		chromedp.WaitVisible(`[data-testid="reply-form"][data-parent="`+answer+`"]`),
		chromedp.SetValue(`#reply-`+answer+`-kind`, "note"),
		chromedp.SendKeys(`#reply-`+answer+`-body`, "Noted by a human: 8443 is free on the staging hosts."),
		chromedp.Click(`#reply-`+answer+` [data-testid="reply-submit"]`),
		chromedp.WaitVisible(`//article[@data-kind="note"]//p[contains(., "Noted by a human")]`),
	)
	screenshot(t, ctx, "thread")

	run(t, ctx, "confirm the model's proposal",
		chromedp.Navigate(a.base+"/proposals"),
		chromedp.WaitVisible(`[data-testid="proposal"][data-thread="`+th+`"]`),
	)
	screenshot(t, ctx, "proposals")
	run(t, ctx, "confirm",
		chromedp.Click(`[data-thread="`+th+`"] [data-testid="confirm"]`),
		chromedp.WaitVisible(`[data-thread="`+th+`"] [data-testid="done"]`),
		chromedp.WaitVisible(`[data-thread="`+th+`"] [data-testid="state"][data-confirmed="true"]`),
	)
	run(t, ctx, "close and lock",
		chromedp.Navigate(a.base+"/threads/"+th),
		chromedp.WaitVisible(`[data-testid="close-lock"]`),
		chromedp.Click(`[data-testid="close-lock"]`),
		chromedp.WaitVisible(`[data-testid="state"][data-state="closed"][data-confirmed="true"]`),
	)
	// The side form gives way to the closed panel as the close lands
	// (issue 29 item 9), and comes back when the thread is reopened.
	run(t, ctx, "the locked thread offers no reply",
		chromedp.WaitVisible(`[data-testid="reply-closed"]`),
	)
	run(t, ctx, "reopen",
		chromedp.Click(`[data-testid="reopen"]`),
		chromedp.WaitVisible(`[data-testid="state"][data-state="open"][data-confirmed="true"]`),
		chromedp.WaitVisible(`#reply-body`),
	)
	screenshot(t, ctx, "thread-reopened")
}

// signInAt signs ada in, landing on path.
func signInAt(t *testing.T, ctx context.Context, a *api, w, h int64, path, wait string) {
	t.Helper()
	run(t, ctx, "sign in",
		chromedp.EmulateViewport(w, h),
		chromedp.Navigate(a.base+path),
		chromedp.WaitVisible(`[data-testid="signin-form"]`),
		chromedp.SendKeys(`#name`, "ada"),
		chromedp.SendKeys(`#password`, "correct horse battery"),
		chromedp.Submit(`[data-testid="signin-form"]`),
		chromedp.WaitVisible(wait),
	)
}

// widths are the screens the pages are tried on: a phone (390×844) and a
// desktop (1280×900).
var widths = []struct {
	w, h int64
}{{390, 844}, {1280, 900}}

// scrollY is how far down the page is scrolled.
func scrollY(t *testing.T, ctx context.Context) float64 {
	t.Helper()
	y, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`window.scrollY`))
	if err != nil {
		t.Fatal(err)
	}
	return y
}
