package web

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// A parked call's answer is written by hand, in one buffer and one write:
// ten thousand answers of a wake (issue 31, item 3) each spent about a
// tenth of their CPU in fasthttp's Response (its header's map, key
// normalising, a pooled bufio.Writer), and as much again arming and
// disarming a write deadline. The bytes are those fasthttp writes for the
// same answer (TestParkedAnswerBytes compares them): the status line,
// Date, Content-Type, Content-Length, the secure headers, the request id,
// Retry-After on a rate limit, Connection: close when the server shuts
// down.

// answerBuffers holds the buffers answers and their bodies are built in,
// those of at most maxPooledAnswer bytes: a long page's is left to the
// collector.
const maxPooledAnswer = 64 << 10

var answerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

func getAnswerBuffer() *[]byte { return answerBuffers.Get().(*[]byte) }

func putAnswerBuffer(b *[]byte) {
	if cap(*b) <= maxPooledAnswer {
		*b = (*b)[:0]
		answerBuffers.Put(b)
	}
}

// appendAnswer appends the answer's bytes to dst.
func appendAnswer(dst []byte, status int, requestID string, body []byte, retryAfter int, closing bool) []byte {
	dst = append(dst, "HTTP/1.1 "...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	dst = append(dst, ' ')
	dst = append(dst, fasthttp.StatusMessage(status)...)
	dst = append(dst, "\r\nDate: "...)
	dst = append(dst, httpDate()...)
	dst = append(dst, "\r\nContent-Type: "+jsonType+"\r\nContent-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	for _, f := range secureHeaderFields {
		dst = append(dst, "\r\n"...)
		dst = append(dst, f[0]...)
		dst = append(dst, ": "...)
		dst = append(dst, f[1]...)
	}
	dst = append(dst, "\r\n"+headerRequestID+": "...)
	dst = append(dst, requestID...)
	if retryAfter > 0 {
		dst = append(dst, "\r\nRetry-After: "...)
		dst = strconv.AppendInt(dst, int64(retryAfter), 10)
	}
	if closing {
		dst = append(dst, "\r\nConnection: close"...)
	}
	dst = append(dst, "\r\n\r\n"...)
	return append(dst, body...)
}

// writeAnswer writes b on conn: at once when the socket takes it all
// (writeNow: an idle connection's send buffer is empty), else under a
// deadline of timeout, as fasthttp writes.
func writeAnswer(conn net.Conn, b []byte, timeout time.Duration) error {
	n, err := writeNow(conn, b)
	if err != nil || n == len(b) {
		return err
	}
	conn.SetWriteDeadline(time.Now().Add(timeout))
	_, err = conn.Write(b[n:])
	conn.SetWriteDeadline(time.Time{})
	return err
}

// httpDate is the Date header's value, formatted once a second.
func httpDate() []byte {
	now := time.Now().Unix()
	if d := date.Load(); d != nil && d.unix == now {
		return d.text
	}
	d := &dateText{unix: now, text: fasthttp.AppendHTTPDate(nil, time.Unix(now, 0))}
	date.Store(d)
	return d.text
}

type dateText struct {
	unix int64
	text []byte
}

var date atomic.Pointer[dateText]
