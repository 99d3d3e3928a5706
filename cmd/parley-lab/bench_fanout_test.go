package main

import (
	"bufio"
	"strconv"
	"strings"
	"testing"
)

// TestReadAnswer walks readAnswer over answers as a server writes them,
// one after another on one connection as a renewed wait reads them: the
// status and body of each, a pooled body given back and taken again for
// a longer one, and the heads it refuses.
func TestReadAnswer(t *testing.T) {
	empty := `{"items":[],"cursor":"c1"}`
	long := `{"items":[{"thread":{"id":"t1"},"message":{"body":"` + strings.Repeat("x", 5000) + `"}}],"cursor":"c2"}`
	stream := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(empty)) + "\r\n\r\n" + empty +
		"HTTP/1.1 200 OK\r\ncontent-length: " + strconv.Itoa(len(long)) + "\r\n\r\n" + long +
		"HTTP/1.1 429 Too Many Requests\r\nContent-Length: 2\r\nRetry-After: 1\r\n\r\n{}"
	br := bufio.NewReaderSize(strings.NewReader(stream), 1024)
	for i, want := range []struct {
		status int
		body   string
	}{
		{200, empty},
		{200, long},
		{429, "{}"},
	} {
		status, body, err := readAnswer(br)
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		if status != want.status || string(*body) != want.body {
			t.Fatalf("answer %d: %d %.40q…, want %d %.40q…", i, status, *body, want.status, want.body)
		}
		answerBodies.Put(body)
	}

	for _, bad := range []string{
		"SSH-2.0-OpenSSH\r\n",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: many\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
	} {
		if status, _, err := readAnswer(bufio.NewReader(strings.NewReader(bad))); err == nil {
			t.Errorf("%q read as a %d answer, want an error", bad, status)
		}
	}
}
