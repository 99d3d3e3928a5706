package web

import (
	"bytes"
	"io"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestParkedAnswerBytes: the answer a parked call writes by hand is, byte
// for byte, the one fasthttp's Response writes with the same status,
// headers and body (its Date aside, which both write and which may tick
// between them), for an answer, a rate limit and an answer while the
// server shuts down.
func TestParkedAnswerBytes(t *testing.T) {
	dateLine := regexp.MustCompile(`\r\nDate: [^\r]+\r\n`)
	for _, c := range []struct {
		name       string
		status     int
		body       string
		retryAfter int
		closing    bool
	}{
		{"page", 200, `{"items":[],"next":"c_1"}`, 0, false},
		{"rate limited", 429, `{"error":{"reason":"rate_limited"}}`, 17, false},
		{"shutting down", 200, `{"items":[]}`, 0, true},
		{"empty body", 503, ``, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := fasthttp.AcquireResponse()
			defer fasthttp.ReleaseResponse(resp)
			setSecureHeaders(&resp.Header)
			resp.Header.Set(headerRequestID, "req-42")
			resp.SetStatusCode(c.status)
			resp.Header.SetContentType(jsonType)
			if c.retryAfter > 0 {
				resp.Header.Set("Retry-After", "17")
			}
			if c.closing {
				resp.SetConnectionClose()
			}
			resp.SetBodyRaw([]byte(c.body))
			var want bytes.Buffer
			if _, err := resp.WriteTo(&want); err != nil {
				t.Fatal(err)
			}
			got := appendAnswer(nil, c.status, "req-42", []byte(c.body), c.retryAfter, c.closing)
			if !dateLine.Match(got) {
				t.Fatalf("no Date header in %q", got)
			}
			if g, w := dateLine.ReplaceAllString(string(got), "\r\n"), dateLine.ReplaceAllString(want.String(), "\r\n"); g != w {
				t.Fatalf("hand-written answer\n%q\nfasthttp's\n%q", g, w)
			}
		})
	}
}

// TestWriteAnswerWaitsForRoom: an answer larger than the socket takes at
// once is written whole, the rest once the reader makes room.
func TestWriteAnswerWaitsForRoom(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	big := []byte(strings.Repeat("0123456789abcdef", 1<<20)) // 16 MiB: more than loopback buffers hold
	done := make(chan error, 1)
	go func() { done <- writeAnswer(server, big, time.Minute) }()
	got := make([]byte, len(big))
	if _, err := io.ReadFull(client, got); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, big) {
		t.Fatal("the answer read differs from the one written")
	}
}
