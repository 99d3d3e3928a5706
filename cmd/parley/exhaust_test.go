package main_test

import (
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parley/internal/testkit"
)

// TestConnectionExhaustion starts the server with 300 file descriptors
// and holds 320 connections open, each with half a request sent. The
// server must stay up: past its connection cap (fitted under the file
// limit) it answers 503 at once; once the read timeout cuts the stalled
// clients off, it serves again.
func TestConnectionExhaustion(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("prlimit"); err != nil {
		testkit.Missing(t, "the connection-exhaustion test", "prlimit is not on PATH (apt-get install util-linux)")
	}
	db := filepath.Join(t.TempDir(), "parley.db")
	p := startServe(t, db, []string{"prlimit", "--nofile=300:300"}, "--read-timeout", "2s")
	if !p.WaitLog("max_conns=") || strings.Contains(p.Stderr.String(), "max_conns=10000") {
		t.Fatalf("the connection cap was not fitted under the file limit:\n%s", p.Tail())
	}

	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 320 {
		c, err := net.DialTimeout("tcp", p.Addr, 2*time.Second)
		if err != nil {
			break // the backlog is full: also a way of saying "not now"
		}
		c.Write([]byte("POST /api/v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"))
		held = append(held, c)
	}
	if len(held) < 250 {
		t.Fatalf("only %d connections could be opened", len(held))
	}
	// While they are held, a new client is told 503 (or waits in the
	// backlog), and the process lives.
	client := &http.Client{Timeout: 5 * time.Second}
	if resp, err := client.Get(p.URL("/healthz")); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable && resp.StatusCode != http.StatusOK {
			t.Fatalf("while exhausted: %d", resp.StatusCode)
		}
	}
	if !p.Alive() {
		t.Fatalf("the server died:\n%s", p.Tail())
	}
	// The read timeout frees the stalled connections; the server serves.
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := client.Get(p.URL("/healthz"))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if !p.Alive() || time.Now().After(deadline) {
			t.Fatalf("the server did not serve again (alive %v, last %v):\n%s", p.Alive(), err, p.Tail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
