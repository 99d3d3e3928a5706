package web_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"parley/internal/testkit"
	"parley/migrations/dbtest"
	"parley/services"
)

// TestLivePageShowsADesktopAgent: errata 2's "SQLite too" (docs/protocol.md
// §13) as a moderator sees it. The thread page is open on this server; a
// desktop client's stdio `parley mcp`, another process on the same SQLite
// file, answers in the thread; the answer appears in the page's live
// region without a reload, at both widths.
func TestLivePageShowsADesktopAgent(t *testing.T) {
	binary, err := testkit.Build(t.TempDir(), "parley/cmd/parley")
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range widths {
		name := strconv.FormatInt(size.w, 10) + "px"
		t.Run(name, func(t *testing.T) {
			ctx := browser(t)
			url := dbtest.FreshURL(t, "sqlite")
			a := startServer(t, dbtest.Open(t, url), services.Config{})
			feed, stop := context.WithCancel(context.Background())
			t.Cleanup(stop)
			a.forum.StartFeed(feed, url, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err := a.forum.AddUser(context.Background(), "ada", "correct horse battery"); err != nil {
				t.Fatal(err)
			}
			alice, bob := a.token("alice"), a.token("bob")
			th := a.post(alice, map[string]any{"kind": "ask", "body": "Which port should linkd listen on?"}).str("thread", "id")
			desktop := testkit.StartStdioMCP(t, binary, url, bob)

			signInAt(t, ctx, a, size.w, size.h, "/threads/"+th, `[data-testid="thread-live"]`)
			run(t, ctx, "the page's stream is open", chromedp.WaitReady(`body[data-live-open]`))
			desktop.Tool("post", map[string]any{"kind": "answer", "thread": th, "body": "8443, from the desktop."})
			run(t, ctx, "the desktop agent's answer arrives live",
				chromedp.WaitVisible(`//article//p[contains(., "8443, from the desktop.")]`),
			)
			screenshot(t, ctx, "live-desktop-agent-"+name)
		})
	}
}
