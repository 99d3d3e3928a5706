package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"parley/services"
)

// rawConn is one client connection, written and read by hand, so that a
// test controls what is sent when and on which connection.
type rawConn struct {
	t    *testing.T
	host string
	conn net.Conn
	br   *bufio.Reader
}

func dialRaw(t *testing.T, a *api) *rawConn {
	t.Helper()
	u, err := url.Parse(a.base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawConn{t: t, host: u.Host, conn: conn, br: bufio.NewReader(conn)}
}

// request is a GET of path with token, as bytes.
func (c *rawConn) request(path, token string) string {
	return fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", path, c.host, token)
}

func (c *rawConn) send(raw string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, raw); err != nil {
		c.t.Fatal(err)
	}
}

// read reads one answer and its body.
func (c *rawConn) read() (*http.Response, map[string]any) {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		c.t.Fatalf("answer %d: %v: %s", resp.StatusCode, err, raw)
	}
	return resp, body
}

// waitFor polls cond until it holds, failing after 60 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitLong lets calls wait 120 s: longer than the tests' bounds.
func waitLong() services.Config {
	limits := services.DefaultLimits()
	limits.WaitMaxSeconds = 120
	return services.Config{Limits: limits}
}

// TestParkedInboxCalls: waiting inbox calls over HTTP hold no goroutine
// while they wait (issue 31, item 3: web/inbox_parked.go); one ask to
// anyone answers every one of them on its connection, with the headers
// an answer given at once has, and a log line each; and each connection
// then serves its client's next request.
func TestParkedInboxCalls(t *testing.T) {
	const calls = 60
	eachServer(t, waitLong(), func(t *testing.T, a *api) {
		asker := a.token("asker")
		// The headers of an answer given at once, for comparison.
		first := dialRaw(t, a)
		tok := a.token("waiter-0")
		first.send(first.request("/api/v1/inbox", tok))
		now, _ := first.read()

		base := runtime.NumGoroutine()
		conns, toks := make([]*rawConn, calls), make([]string, calls)
		for i := range conns {
			if i > 0 && i%2 == 0 {
				tok = a.token(fmt.Sprintf("waiter-%d", i))
			}
			conns[i], toks[i] = dialRaw(t, a), tok
			conns[i].send(conns[i].request("/api/v1/inbox?wait=60", tok))
		}
		waitFor(t, "every call waits", func() bool { return waitRows(t, a) == calls })
		// A goroutine per call would be calls more than base; the
		// connection workers of the burst leave within seconds.
		waitFor(t, fmt.Sprintf("the waiting calls hold no goroutine (%d more than before them)", runtime.NumGoroutine()-base),
			func() bool { return runtime.NumGoroutine()-base < calls/4 })

		a.ok(201, "POST", "/api/v1/messages", asker, map[string]any{"kind": "ask", "body": "Who knows the port?"})
		cursors := make([]string, calls)
		for i, c := range conns {
			resp, body := c.read()
			cursors[i], _ = body["cursor"].(string)
			items, _ := body["items"].([]any)
			if resp.StatusCode != http.StatusOK || len(items) != 1 {
				t.Fatalf("call %d: %d %v", i, resp.StatusCode, body)
			}
			for name := range now.Header {
				if name != "Date" && resp.Header.Get(name) == "" {
					t.Fatalf("call %d: the answer lacks %s, which an answer given at once has: %v", i, name, resp.Header)
				}
			}
			if resp.Header.Get("X-Request-Id") == now.Header.Get("X-Request-Id") || resp.Close {
				t.Fatalf("call %d: request id %q, closing %v", i, resp.Header.Get("X-Request-Id"), resp.Close)
			}
		}
		// Each connection is served on: its next request, waiting again.
		for i, c := range conns {
			c.send(c.request("/api/v1/inbox?wait=1&since="+url.QueryEscape(cursors[i]), toks[i]))
		}
		for i, c := range conns {
			if resp, body := c.read(); resp.StatusCode != http.StatusOK {
				t.Fatalf("connection %d, next request: %d %v", i, resp.StatusCode, body)
			}
		}
		waitFor(t, "every slot released", func() bool { return waitRows(t, a) == 0 })
		// One log line per answer, with its method and route intact (the
		// request's buffer is reused once the handler returns), written
		// after the answers (late_lines.go).
		lines := func() int {
			n := 0
			for _, l := range strings.Split(a.logs.String(), "\n") {
				var e map[string]any
				if json.Unmarshal([]byte(l), &e) != nil || e["operation"] != "inbox" || e["status"] != float64(200) {
					continue
				}
				if e["method"] != "GET" || e["route"] != "/api/v1/inbox" {
					t.Fatalf("log line of an inbox call: %s", l)
				}
				n++
			}
			return n
		}
		waitFor(t, "a log line per answer", func() bool { return lines() >= 1+2*calls })
		if n := lines(); n != 1+2*calls {
			t.Fatalf("%d log lines of inbox calls answered, want %d", n, 1+2*calls)
		}
	})
}

// TestParkedInboxPipelined: a client that sends its next request before
// the waiting one is answered (pipelining) gets both answers, in order.
func TestParkedInboxPipelined(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		tok := a.token("bob")
		c := dialRaw(t, a)
		c.send(c.request("/api/v1/inbox?wait=1", tok) + c.request("/api/v1/me", tok))
		start := time.Now()
		if resp, body := c.read(); resp.StatusCode != http.StatusOK || body["items"] == nil {
			t.Fatalf("the waiting call: %d %v", resp.StatusCode, body)
		}
		if waited := time.Since(start); waited < 900*time.Millisecond {
			t.Fatalf("the waiting call was answered after %s, before its wait of 1 s", waited)
		}
		if resp, body := c.read(); resp.StatusCode != http.StatusOK || body["identity"] == nil {
			t.Fatalf("the request behind it: %d %v", resp.StatusCode, body)
		}
	})
}

// TestParkedInboxAtShutdown: a server that shuts down answers its parked
// calls at once (the page they have, empty) and closes their connections.
func TestParkedInboxAtShutdown(t *testing.T) {
	eachServer(t, waitLong(), func(t *testing.T, a *api) {
		c := dialRaw(t, a)
		c.send(c.request("/api/v1/inbox?wait=60", a.token("bob")))
		waitFor(t, "the call waits", func() bool { return waitRows(t, a) == 1 })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		start := time.Now()
		if err := a.app.ShutdownWithContext(ctx); err != nil {
			t.Fatal(err)
		}
		resp, body := c.read()
		items, ok := body["items"].([]any)
		if resp.StatusCode != http.StatusOK || !ok || len(items) != 0 || !resp.Close {
			t.Fatalf("a parked call at shutdown: %d %v, closing %v", resp.StatusCode, body, resp.Close)
		}
		if took := time.Since(start); took > 30*time.Second {
			t.Fatalf("answered %s after the shutdown began", took)
		}
		if waitRows(t, a) != 0 {
			t.Fatal("its slot is still held")
		}
	})
}
