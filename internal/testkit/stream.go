package testkit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// RawStream is GET /api/v1/stream on a socket of its own, written by hand,
// so that a test can drop the connection the ways a client does: with an
// RST (Reset), a FIN (HalfClose), or an ordinary Close.
type RawStream struct {
	Addr   string
	Status int
	Reply  map[string]any // the decoded refusal, when Status is not 200
	conn   *net.TCPConn
}

// OpenRawStream sends the request to addr and reads the answer's status
// and headers; a stream's body is then read and thrown away until the
// connection closes, as a client that is there would.
func OpenRawStream(t testing.TB, addr, token string) *RawStream {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	conn := c.(*net.TCPConn)
	fmt.Fprintf(conn, "GET /api/v1/stream HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n", addr, token)
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		conn.Close()
		t.Fatalf("stream at %s: %v", addr, err)
	}
	conn.SetReadDeadline(time.Time{})
	s := &RawStream{Addr: addr, Status: resp.StatusCode, conn: conn}
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		json.Unmarshal(raw, &s.Reply)
		conn.Close()
		return s
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("stream at %s: Content-Type %q", addr, ct)
	}
	t.Cleanup(func() { conn.Close() })
	go io.Copy(io.Discard, br)
	return s
}

// RetryAfter is the refusal's error.retry_after, in seconds (0 if none).
func (s *RawStream) RetryAfter() float64 {
	v, _ := Dig(s.Reply, "error", "retry_after").(float64)
	return v
}

// Reason is the refusal's error.reason.
func (s *RawStream) Reason() string { return Str(s.Reply, "error", "reason") }

// Reset drops the connection abruptly: SO_LINGER 0, then close, which
// sends an RST.
func (s *RawStream) Reset() {
	s.conn.SetLinger(0)
	s.conn.Close()
}

// HalfClose sends a FIN (CloseWrite) and keeps reading: the client has
// said it is done.
func (s *RawStream) HalfClose() { s.conn.CloseWrite() }

// Close closes the connection as clients usually do (a FIN; the kernel
// answers what arrives afterwards with an RST).
func (s *RawStream) Close() { s.conn.Close() }

// StreamSlots is the scenario of docs/protocol.md §13, "a closed stream
// stops counting" (errata 2), against servers at addrs that share one
// database, for a token allowed limit streams: it opens limit streams,
// spread over addrs; a further one is refused with retry_after; then, for
// each way of dropping a connection, it drops a stream on one server and
// opens again on the next (another process when there are two), retrying
// until admitted within a generous bound, and logs how long that took.
// Last, with every stream alive, it closes one, waits the refusal's
// retry_after and requires the next open to succeed at once: retry_after
// is truthful. It returns the streams left open, limit of them.
func StreamSlots(t *testing.T, addrs []string, token string, limit int) []*RawStream {
	t.Helper()
	var open []*RawStream
	for i := range limit {
		s := OpenRawStream(t, addrs[i%len(addrs)], token)
		if s.Status != http.StatusOK {
			t.Fatalf("stream %d of %d: %d %v", i+1, limit, s.Status, s.Reply)
		}
		open = append(open, s)
	}
	refused := func(at string) float64 {
		t.Helper()
		s := OpenRawStream(t, at, token)
		if s.Status != http.StatusTooManyRequests || s.Reason() != "rate_limited" || s.RetryAfter() < 1 {
			t.Fatalf("stream %d at %s with %d alive: %d %v", limit+1, at, limit, s.Status, s.Reply)
		}
		return s.RetryAfter()
	}
	for i, at := range addrs {
		t.Logf("with %d streams alive, stream %d at server %d refused, retry_after %v s", limit, limit+1, i+1, refused(at))
	}
	drops := []struct {
		name string
		drop func(*RawStream)
	}{{"RST", (*RawStream).Reset}, {"FIN (CloseWrite)", (*RawStream).HalfClose}, {"Close", (*RawStream).Close}}
	for k, d := range drops {
		victim := open[k%limit]
		at := addrs[(k%limit+1)%len(addrs)]
		start := time.Now()
		d.drop(victim)
		tries := 0
		for {
			tries++
			s := OpenRawStream(t, at, token)
			if s.Status == http.StatusOK {
				open[k%limit] = s
				break
			}
			if s.Status != http.StatusTooManyRequests {
				t.Fatalf("reopen after %s: %d %v", d.name, s.Status, s.Reply)
			}
			if time.Since(start) > time.Minute {
				t.Fatalf("after %s of a stream at %s, still refused at %s after %d tries in %s", d.name, victim.Addr, at, tries, time.Since(start))
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("%s of a stream at %s: a new one admitted at %s after %s (%d tries)", d.name, victim.Addr, at, time.Since(start).Round(time.Millisecond), tries)
	}
	// Every stream is alive again: refused, and retry_after holds.
	at := addrs[len(addrs)-1]
	retry := refused(at)
	open[0].Close()
	time.Sleep(time.Duration(retry * float64(time.Second)))
	s := OpenRawStream(t, at, token)
	if s.Status != http.StatusOK {
		t.Fatalf("closed one stream and waited retry_after (%v s): still %d %v", retry, s.Status, s.Reply)
	}
	open[0] = s
	return open
}
