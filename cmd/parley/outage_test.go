package main_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/internal/testkit"
)

// dbProxy stands between the server and PostgreSQL so that a test can take
// the database away without touching the server other tests share: down
// closes every connection and refuses new ones, as a stopped server does;
// freeze stops passing bytes while keeping connections open, as a server
// stopped with SIGSTOP does; up restores service.
type dbProxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	mode   string // "up", "down" or "frozen"
	conns  []net.Conn
	thawed chan struct{} // closed when the proxy leaves "frozen"
}

func newDBProxy(t *testing.T, target string) *dbProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dbProxy{ln: ln, target: target, mode: "up", thawed: make(chan struct{})}
	close(p.thawed)
	t.Cleanup(func() { ln.Close(); p.set("down") })
	go p.serve()
	return p
}

func (p *dbProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.mode == "down" {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.mu.Unlock()
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

// pipe copies src to dst, holding each chunk while the proxy is frozen.
func (p *dbProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			thawed := p.thawed
			p.mu.Unlock()
			<-thawed
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				src.Close()
			}
			return
		}
	}
}

func (p *dbProxy) set(mode string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == "frozen" && mode != "frozen" {
		close(p.thawed)
	}
	if mode == "frozen" && p.mode != "frozen" {
		p.thawed = make(chan struct{})
	}
	if mode == "down" {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
	p.mode = mode
}

// proxyFor starts a proxy in front of a postgres:// URL's server and
// returns the proxy and the URL pointed at it.
func proxyFor(t *testing.T, raw string) (*dbProxy, string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p := newDBProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	return p, u.String()
}

// TestDatabaseOutage takes PostgreSQL away under load, twice: stopped
// (connections closed, new ones refused) and frozen (connections open,
// nothing answers, as under SIGSTOP). Meanwhile every request is answered
// promptly — posts with 503 unavailable, /readyz with 503 within a second —
// and afterwards the same server process serves again, with everything it
// acknowledged stored once and nothing half-written.
func TestDatabaseOutage(t *testing.T) {
	t.Parallel()
	db := postgresSchema(t)
	// Four posters, one token each, and a fifth token that probes; posts
	// are paced to stay far below posts_per_minute.
	tokens := agentTokens(t, db, 5)
	probe := tokens[4]
	tokens = tokens[:4]
	proxy, proxied := proxyFor(t, db)
	p := startServe(t, proxied, nil, "--request-timeout", "1s")
	// A refusal must come from the request deadline (1 s), not from the
	// client giving up: the client's bound is generous, so that only a
	// server that waits on the database past its deadline fails here, and
	// a loaded machine does not.
	client := &http.Client{Timeout: 30 * time.Second}

	var all []ack
	for _, mode := range []string{"down", "frozen"} {
		stop := make(chan struct{})
		done := make(chan struct{})
		var acks []ack
		go func() { acks, _ = posters(p, "outage "+mode, tokens, 25, 40*time.Millisecond, stop); close(done) }()
		time.Sleep(300 * time.Millisecond) // the posters are under way; how far, the checks do not depend on
		proxy.set(mode)

		start := time.Now()
		status, body, err := call(client, "POST", p.URL("/api/v1/messages"), probe, map[string]any{"kind": "ask", "body": "during the outage (" + mode + ")"})
		if err != nil || status != http.StatusServiceUnavailable || testkit.Str(body, "error", "reason") != "unavailable" {
			t.Fatalf("%s: a post answered %d %v (%v), want 503 unavailable\n%s", mode, status, body, err, p.Tail())
		}
		t.Logf("%s: the refused post took %v (request deadline 1 s)", mode, time.Since(start))
		start = time.Now()
		resp, err := client.Get(p.URL("/readyz"))
		if err != nil {
			t.Fatalf("%s: /readyz: %v (server alive: %v)\n%s", mode, err, p.Alive(), p.Tail())
		}
		ready, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, secret := range []string{"user=", "postgres", "database=", proxy.ln.Addr().String(), "127.0.0.1"} {
			if strings.Contains(string(ready), secret) {
				t.Fatalf("%s: /readyz tells the database's details: %s", mode, ready)
			}
		}
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s: /readyz answered %d after %v, want 503", mode, resp.StatusCode, time.Since(start))
		}
		t.Logf("%s: /readyz answered 503 in %v", mode, time.Since(start))

		time.Sleep(500 * time.Millisecond) // the outage lasts a while; its length is not checked
		proxy.set("up")
		close(stop)
		<-done
		all = append(all, acks...)

		// The same process serves again without a restart.
		var healthy bool
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			status, _, err := call(client, "POST", p.URL("/api/v1/messages"), probe, map[string]any{"kind": "ask", "body": "after the outage (" + mode + ")"})
			if err == nil && status == http.StatusCreated {
				healthy = true
				break
			}
		}
		if !healthy || !p.Alive() {
			t.Fatalf("%s: the server did not recover:\n%s", mode, p.Tail())
		}
	}
	checkStored(t, db, p, tokens[0], all)
	for _, line := range strings.Split(p.Stderr.String(), "\n") {
		if strings.Contains(line, "status=500") {
			t.Fatalf("a request was answered 500 during the outage: %s", line)
		}
	}
}
