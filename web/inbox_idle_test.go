package web_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/web"
)

// TestAnsweredConnectionsAreHeld: the connections of waiting calls that
// one ask answers wait for their clients' next requests without a
// goroutine each (web/inbox_idle.go, on Linux); a client that sends one is
// served on that connection, and one that stays silent past the idle
// timeout is closed by the server.
func TestAnsweredConnectionsAreHeld(t *testing.T) {
	const calls = 40
	idle := 5 * time.Second
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		a := startServerWith(t, db, waitLong(), web.Options{IdleTimeout: idle})
		asker := a.token("asker")
		conns, toks := parkCalls(t, a, calls)
		base := runtime.NumGoroutine()
		// Before the ask: the server holds a connection only once it has
		// answered, which may be before the ask's own answer reaches us.
		asked := time.Now()
		a.ok(201, "POST", "/api/v1/messages", asker, map[string]any{"kind": "ask", "body": "Who knows the port?"})
		for i, c := range conns {
			if resp, body := c.read(); resp.StatusCode != http.StatusOK {
				t.Fatalf("call %d: %d %v", i, resp.StatusCode, body)
			}
		}
		if runtime.GOOS == "linux" {
			waitFor(t, fmt.Sprintf("the answered connections hold no goroutine (%d more than while they waited)", runtime.NumGoroutine()-base),
				func() bool { return runtime.NumGoroutine()-base < calls/4 })
		}
		// Half send their next request, the rest stay silent.
		for i, c := range conns[:calls/2] {
			c.send(c.request("/api/v1/me", toks[i]))
		}
		for i, c := range conns[:calls/2] {
			if resp, body := c.read(); resp.StatusCode != http.StatusOK || body["identity"] == nil {
				t.Fatalf("connection %d, next request: %d %v", i, resp.StatusCode, body)
			}
		}
		for i, c := range conns[calls/2:] {
			c.conn.SetReadDeadline(time.Now().Add(60 * time.Second))
			n, err := c.br.ReadByte()
			if !errors.Is(err, io.EOF) {
				t.Fatalf("silent connection %d: read %v, %v; want the server to close it", i, n, err)
			}
			if took := time.Since(asked); took < idle {
				t.Fatalf("silent connection %d closed %s after its answer, before the idle timeout (%s)", i, took, idle)
			}
		}
	})
}

// TestAnsweredConnectionsAtShutdown: a server that shuts down closes the
// answered connections it holds.
func TestAnsweredConnectionsAtShutdown(t *testing.T) {
	eachServer(t, waitLong(), func(t *testing.T, a *api) {
		conns, _ := parkCalls(t, a, 3)
		a.ok(201, "POST", "/api/v1/messages", a.token("asker"), map[string]any{"kind": "ask", "body": "Anyone?"})
		for _, c := range conns {
			c.read()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := a.app.ShutdownWithContext(ctx); err != nil {
			t.Fatal(err)
		}
		for i, c := range conns {
			c.conn.SetReadDeadline(time.Now().Add(60 * time.Second))
			if _, err := c.br.ReadByte(); !errors.Is(err, io.EOF) {
				t.Fatalf("connection %d after the shutdown: %v, want it closed", i, err)
			}
		}
	})
}

// parkCalls opens n connections, each with a waiting inbox call of its own
// token, and returns once every call waits.
func parkCalls(t *testing.T, a *api, n int) ([]*rawConn, []string) {
	t.Helper()
	conns, toks := make([]*rawConn, n), make([]string, n)
	for i := range conns {
		toks[i] = a.token(fmt.Sprintf("waiter-%d", i))
		conns[i] = dialRaw(t, a)
		conns[i].send(conns[i].request("/api/v1/inbox?wait=60", toks[i]))
	}
	waitFor(t, "every call waits", func() bool { return waitRows(t, a) == n })
	return conns, toks
}
