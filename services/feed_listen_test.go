package services_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/migrations/dbtest"
	"parley/services"
)

// syncLog is a log the feed's goroutines write while the test reads it.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) lines(with string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if strings.Contains(line, with) {
			out = append(out, line)
		}
	}
	return out
}

// gate is a TCP proxy to PostgreSQL that either closes every connection
// at once (shut) or forwards them; cut closes the ones it forwards.
type gate struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	open   bool
	conns  []net.Conn
}

func newGate(t *testing.T, target string) *gate {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); g.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			g.mu.Lock()
			open := g.open
			g.mu.Unlock()
			if !open {
				c.Close()
				continue
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			g.mu.Lock()
			g.conns = append(g.conns, c, up)
			g.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
	return g
}

func (g *gate) setOpen(open bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open = open
}

func (g *gate) cut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.conns {
		c.Close()
	}
	g.conns = nil
}

// via is raw with its host replaced by addr.
func via(t *testing.T, raw, addr string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	return u.String()
}

// waitFor polls cond until it holds, failing after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for give := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(give) {
			t.Fatalf("after a minute, still not: %s", what)
		}
	}
}

// TestListenBackoffResets (issue 23 item 8): after an outage long enough
// to lengthen the LISTEN connection's back-off, and a connection that
// listened again, the next loss is retried after the shortest back-off,
// not the outage's longest. The back-off is read from the log, where the
// listener says how long it waits.
func TestListenBackoffResets(t *testing.T) {
	url := dbtest.FreshURL(t, "postgres")
	u, _ := neturl(url)
	g := newGate(t, u)
	forum := services.New(dbtest.Open(t, url), services.Config{})
	logs := &syncLog{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	forum.StartFeed(ctx, via(t, url, g.ln.Addr().String()), slog.New(slog.NewTextHandler(logs, nil)))

	waitFor(t, "the back-off doubled to 800ms", func() bool { return len(logs.lines("in=800ms")) > 0 })
	g.setOpen(true)
	waitFor(t, "the listener hears again", func() bool { return forum.FeedProblem() == "" })
	before := len(logs.lines("listener lost"))
	g.cut()
	waitFor(t, "the listener noticed the cut", func() bool { return len(logs.lines("listener lost")) > before })
	lost := logs.lines("listener lost")[before]
	if !strings.Contains(lost, "in=100ms") {
		t.Fatalf("after a connection that listened, the next loss waits: %s\nwant in=100ms", lost)
	}
}

// neturl is the host:port of a postgres:// URL.
func neturl(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	return u.Host, nil
}

// TestDeafListenerIsLoud (issue 24): a LISTEN connection that connects
// and listens but hears nothing (here: another database of the cluster,
// where this one's notifications never go; behind PgBouncer in transaction
// mode, the pooler) is found out by the listener's self-check: an error in
// the log naming --db-listen-url, FeedProblem saying so (/readyz shows it
// as degraded), and waiting reads that poll instead of sleeping to the
// 5 s backstop: each of five waits on this forum, woken by a post through
// another, answers within 2 s (on the backstop they would all have to
// fall in the first 2 s of it by chance).
func TestDeafListenerIsLoud(t *testing.T) {
	url := dbtest.FreshURL(t, "postgres")
	other, err := otherDatabase(url)
	if err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t, url)
	one, two := services.New(db, services.Config{}), services.New(dbtest.Open(t, url), services.Config{})
	logs := &syncLog{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	one.StartFeed(ctx, other, slog.New(slog.NewTextHandler(logs, nil)))
	two.StartFeed(ctx, url, slog.New(slog.DiscardHandler))

	waitFor(t, "the deaf listener is reported", func() bool { return strings.Contains(one.FeedProblem(), "--db-listen-url") })
	if errs := logs.lines("level=ERROR"); len(errs) == 0 || !strings.Contains(errs[0], "PARLEY_DATABASE_LISTEN_URL") {
		t.Fatalf("no error in the log naming the fix: %q", errs)
	}
	w := &world{t: t, db: db, forum: one, ctx: ctx}
	alice, bob := w.agent("alice"), w.agent("bob")
	for trial := range 5 {
		box, _ := one.Inbox(ctx, bob, services.InboxQuery{})
		got := waitInbox(one, bob, services.InboxQuery{Since: box.Cursor, Wait: "20"})
		time.Sleep(50 * time.Millisecond) // let it wait (not a condition of the outcome)
		start := time.Now()
		p, err := two.Post(ctx, alice, fmt.Appendf(nil, `{"kind":"ask","to":{"identity":"ainotes:bob"},"body":"Heard? (trial %d)"}`, trial))
		if err != nil {
			t.Fatal(err)
		}
		b := <-got
		took := time.Since(start)
		if len(b.Items) != 1 || b.Items[0].Message.ID != p.Message.ID || took > 2*time.Second {
			t.Fatalf("trial %d: the waiting inbox answered %+v after %v; want the ask within 2 s (polling)", trial, b, took)
		}
		t.Logf("trial %d: woken by polling %v after the post", trial, took)
	}
}

// otherDatabase is raw on the cluster's postgres database.
func otherDatabase(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	u.Path = "/postgres"
	return u.String(), nil
}
