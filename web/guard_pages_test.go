package web_test

import (
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/services"
)

// movable is a clock the test moves, for services.Config.Now.
type movable struct {
	mu sync.Mutex
	t  time.Time
}

func (c *movable) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *movable) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// guardConfig pauses a thread after 4 model messages in a row, on a clock
// the test moves.
func guardConfig(clk *movable) services.Config {
	limits := services.DefaultLimits()
	limits.GuardThreadRunMax = 4
	return services.Config{Limits: limits, Now: clk.now}
}

// pausedThread makes a thread the guard has paused: four model messages.
func pausedThread(a *api, alice, bob string) string {
	a.t.Helper()
	th := a.post(alice, map[string]any{"kind": "ask", "body": "Rename the service to linkd?"}).str("thread", "id")
	for i, body := range []string{"Yes, linkd.", "Why not shortener?", "Because our daemons end in d."} {
		who := bob
		if i == 1 {
			who = alice
		}
		a.post(who, map[string]any{"kind": "note", "thread": th, "from": map[string]any{"extension": "w"}, "body": body})
	}
	a.refused(services.LoopSuspected, "POST", "/api/v1/messages", bob, map[string]any{"kind": "note", "thread": th, "body": "linkd it is."})
	return th
}

// TestPausedThreadPage: a paused thread says so on its page and in the
// list, and the human resumes it in one click (a human's note).
func TestPausedThreadPage(t *testing.T) {
	clk := &movable{t: time.Now().UTC()}
	eachServer(t, guardConfig(clk), func(t *testing.T, a *api) {
		b := signedIn(t, a)
		alice, bob := a.token("alice"), a.token("bob")
		th := pausedThread(a, alice, bob)

		list := b.page("GET", "/threads", nil, 200)
		if list.Find(`[data-thread="`+th+`"] [data-testid="badge-paused"]`).Length() != 1 {
			t.Fatal("the thread list does not mark the paused thread")
		}
		doc := b.page("GET", "/threads/"+th, nil, 200)
		notice := doc.Find(`[data-testid="guard-paused"]`)
		if !strings.Contains(notice.Text(), "Any message of yours resumes it") || notice.Find(`[data-testid="resume"]`).Length() != 1 {
			t.Fatalf("paused notice %q", notice.Text())
		}
		doc = b.page("POST", "/threads/"+th+"/resume", url.Values{"_csrf": {b.csrf}}, 200) // redirected back to the thread
		if doc.Find(`[data-testid="guard-paused"]`).Length() != 0 {
			t.Fatal("still paused after resuming")
		}
		got := a.ok(200, "GET", "/api/v1/threads/"+th, bob, nil)
		if got.get("thread", "guard") != "active" {
			t.Fatalf("guard %v after resuming", got.get("thread", "guard"))
		}
		last := doc.Find(`[data-testid="message"]`).Last()
		if last.AttrOr("data-kind", "") != "note" || !strings.Contains(last.Text(), "human:ada") {
			t.Fatalf("the resume is not a human's note: %q", last.Text())
		}
		a.post(bob, map[string]any{"kind": "note", "thread": th, "body": "linkd it is."})
	})
}

// TestOverduePage: escalated threads are listed oldest deadline first with
// who failed to answer; the thread page and list say overdue, the timeline
// shows the escalation; an answer takes the thread off the page.
func TestOverduePage(t *testing.T) {
	clk := &movable{t: time.Now().UTC().Truncate(time.Second)}
	eachServer(t, guardConfig(clk), func(t *testing.T, a *api) {
		b := signedIn(t, a)
		alice, bob := a.token("alice"), a.token("bob")
		at := func(d time.Duration) string { return clk.now().Add(d).Format(time.RFC3339) }
		late := a.post(alice, map[string]any{"kind": "ask", "body": "Who reviews the cache PR?", "reply_by": at(2 * time.Hour)}).str("thread", "id")
		early := a.post(alice, map[string]any{"kind": "ask", "to": map[string]any{"identity": "ainotes:bob"}, "body": "Is the mirror in sync?", "reply_by": at(time.Hour)}).str("thread", "id")
		a.post(alice, map[string]any{"kind": "ask", "body": "Due later.", "reply_by": at(5 * time.Hour)})

		if doc := b.page("GET", "/overdue", nil, 200); doc.Find(`[data-testid="no-overdue"]`).Length() != 1 {
			t.Fatal("overdue page not empty before any deadline")
		}
		clk.advance(3 * time.Hour)
		doc := b.page("GET", "/overdue", nil, 200)
		items := doc.Find(`[data-testid="overdue"]`)
		if items.Length() != 2 || items.Eq(0).AttrOr("data-thread", "") != early || items.Eq(1).AttrOr("data-thread", "") != late {
			t.Fatalf("overdue items %d: %q", items.Length(), items.Text())
		}
		first := items.Eq(0)
		if first.Find(`[data-testid="awaited"]`).Text() != "ainotes:bob" || first.Find(`[data-testid="ask"]`).Text() != "Is the mirror in sync?" {
			t.Fatalf("first item %q", first.Text())
		}
		if items.Eq(1).Find(`[data-testid="awaited"]`).Text() != "anyone" {
			t.Fatalf("second item %q", items.Eq(1).Text())
		}
		page := b.page("GET", "/threads/"+early, nil, 200)
		if !strings.Contains(page.Find(`[data-testid="guard-overdue"]`).Text(), "ainotes:bob has not answered") {
			t.Fatalf("thread page: %q", page.Find(`[data-testid="guard-overdue"]`).Text())
		}
		if esc := page.Find(`[data-testid="event"][data-type="escalate"]`); !strings.Contains(esc.Text(), "ainotes:bob did not answer") {
			t.Fatalf("timeline: %q", esc.Text())
		}
		if b.page("GET", "/threads", nil, 200).Find(`[data-thread="`+early+`"] [data-testid="badge-overdue"]`).Length() != 1 {
			t.Fatal("the thread list does not mark the overdue thread")
		}
		a.post(bob, map[string]any{"kind": "answer", "thread": early, "body": "In sync."})
		if items := b.page("GET", "/overdue", nil, 200).Find(`[data-testid="overdue"]`); items.Length() != 1 || items.AttrOr("data-thread", "") != late {
			t.Fatalf("after the answer: %d items", items.Length())
		}
	})
}
