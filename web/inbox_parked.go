package web

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"parley/services"
)

// A waiting inbox call over HTTP (?wait=N) holds no goroutine while it
// waits (issue 31, item 3): ten thousand of them held ten thousand
// connection goroutines, each with its stack, fasthttp's request context
// and the middlewares' contexts — about 48 KiB apiece. Once its first read
// has found nothing, the call is parked: the service keeps it as
// registrations (services.Forum.InboxThen), the handler returns, and the
// connection is taken from fasthttp (a hijack, which the server keeps
// open: KeepHijackedConns). When the call is answered — woken and served
// by its process's shared read, its wait passed, its client gone, its
// token revoked — the answer is written on the connection with the
// headers the request's middlewares set (secureHeaders', its request id:
// TestParkedInboxCalls compares them with an answer's given at once), its
// log line is queued (late_lines.go), and
// the connection waits for the client's next request (inbox_idle.go).
//
// Not parked, and served as before by a goroutine that waits: a request
// that is not HTTP/1.1 keep-alive (its connection ends with the answer),
// any call while the server shuts down, and any beyond the server's
// connection cap (parked calls and fasthttp's connections together stay
// within MaxConns). A request the client sent behind the waiting one
// before it was answered (pipelining) sits in fasthttp's read buffer,
// which must not outlive the hijack: such a connection keeps its goroutine
// until the answer, then is served on as fasthttp would.
//
// Scaling: the calls parked are this process's own connections, in memory
// as its blocked goroutines were; the database stays the truth.

const parkedKey = "parley.parked"

// parkedCalls is the server's set of parked calls, for its connection cap
// and its shutdown.
type parkedCalls struct {
	mu       sync.Mutex
	calls    map[*parkedCall]bool
	stopping bool
	wg       sync.WaitGroup
}

// parkedCall is one waiting inbox call, from its handler to its answer.
type parkedCall struct {
	s         *server
	ctx       context.Context
	cancel    context.CancelFunc
	stopWatch func() // the departure watch (client_gone*.go)
	start     time.Time
	line      requestLine
	ready     chan struct{} // closed once answered

	mu       sync.Mutex
	answered bool
	out      services.Inbox
	err      error
	handed   bool     // the handler returned: the answer goes to conn
	conn     net.Conn // the hijacked connection, once known
}

// park readies a waiting inbox call to be parked: its own context (the
// middlewares' end with the handler) with the request's deadline, watched
// for its client's departure. nil: the call waits as before.
func (s *server) park(c *fiber.Ctx) *parkedCall {
	w, err := strconv.Atoi(c.Query("wait"))
	h := &c.Context().Request.Header
	if err != nil || w <= 0 || !h.IsHTTP11() || h.ConnectionClose() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.UserContext()), waitBudget(s.requestTimeout, s.waitMax, w))
	line := s.lineOf(c)
	// Fiber's strings are views of the request's buffer, reused once the
	// handler has returned.
	line.id, line.method, line.route = strings.Clone(line.id), strings.Clone(line.method), strings.Clone(line.route)
	p := &parkedCall{s: s, ctx: ctx, cancel: cancel, stopWatch: func() {}, start: time.Now(), line: line, ready: make(chan struct{})}
	if !s.parked.add(p, s.maxConns-int(s.srv.GetOpenConnectionsCount())-s.idle.count()) {
		cancel()
		return nil
	}
	// The middleware's watch of this connection (endWaitWhenGone) ends with
	// the handler; this one replaces its registration.
	if stop, ok := watchGone(c.Context().Conn(), cancel); ok {
		p.stopWatch = stop
	}
	return p
}

// answer is the service's answer; it is delivered on the connection once
// the handler has handed it over.
func (p *parkedCall) answer(out services.Inbox, err error) {
	p.mu.Lock()
	p.out, p.err, p.answered = out, err, true
	conn := p.conn
	p.mu.Unlock()
	close(p.ready)
	if conn != nil {
		p.deliver(conn, conn, false)
	}
}

// handOff ends the handler: with the answer when it came at once, else by
// taking the connection from fasthttp.
func (p *parkedCall) handOff(c *fiber.Ctx) error {
	p.mu.Lock()
	if p.answered {
		p.mu.Unlock()
		p.end()
		if p.err != nil {
			return p.err
		}
		return writeJSON(c, fiber.StatusOK, p.out)
	}
	p.handed = true
	p.mu.Unlock()
	c.Locals(parkedKey, true)
	c.Context().HijackSetNoResponse(true)
	c.Context().Hijack(p.hijacked)
	return nil
}

// hijacked runs once fasthttp has let go of the connection, in a goroutine
// of its own.
func (p *parkedCall) hijacked(hj net.Conn) {
	raw := hj
	if u, ok := hj.(interface{ UnsafeConn() net.Conn }); ok {
		raw = u.UnsafeConn()
	}
	// A byte already read (a pipelined request) is in fasthttp's buffer,
	// which hj reads first; a deadline in the past keeps the socket unread.
	var b [1]byte
	raw.SetReadDeadline(time.Unix(1, 0))
	n, _ := hj.Read(b[:])
	raw.SetReadDeadline(time.Time{})
	if n > 0 {
		<-p.ready
		p.deliver(raw, &prefixedConn{Conn: hj, first: b[:1]}, true)
		return
	}
	p.mu.Lock()
	p.conn = raw
	answered := p.answered
	p.mu.Unlock()
	if answered {
		p.deliver(raw, raw, true)
	}
}

// deliver writes the answer on raw, writes the log line, and serves next
// (raw, or raw behind what was read of it) for the client's next request.
// From the service's round (services.Forum.InboxThen: it answers thousands
// of calls from a few goroutines) it does not block: an answer the socket
// does not take at once is written, and the connection served, in a
// goroutine of its own. From the hijack's goroutine (inPlace), whose
// fasthttp buffers a pipelined request may still be in, all is done there.
func (p *parkedCall) deliver(raw, next net.Conn, inPlace bool) {
	s := p.s
	p.end()
	s.late.begin()
	body, buf := getAnswerBuffer(), getAnswerBuffer()
	status, r := p.encode(body)
	retryAfter := 0
	if r != nil && r.Reason == services.RateLimited {
		retryAfter = r.RetryAfter
	}
	closing := s.parked.closing()
	*buf = appendAnswer((*buf)[:0], status, p.line.id, *body, retryAfter, closing)
	putAnswerBuffer(body)
	line := lateLine{line: p.line, status: status, r: r, took: time.Since(p.start)}
	n, err := writeNow(raw, *buf)
	if err == nil && n < len(*buf) {
		rest := func() {
			err := writeAnswer(raw, (*buf)[n:], s.writeTimeout)
			putAnswerBuffer(buf)
			p.delivered(raw, next, line, err != nil || closing, false)
		}
		if inPlace {
			rest()
		} else {
			go rest()
		}
		return
	}
	putAnswerBuffer(buf)
	p.delivered(raw, next, line, err != nil || closing, !inPlace)
}

// delivered follows an answer written (or not: end): its line is queued,
// written after the answer with the others of a wake (late_lines.go), with
// the answer's duration; then the connection is closed (end), or served
// on in this goroutine, or (spawn) held until the client's next request
// (holdIdle) or else served on in a goroutine of its own.
func (p *parkedCall) delivered(raw, next net.Conn, line lateLine, end, spawn bool) {
	s := p.s
	s.late.add(line)
	s.late.end()
	p.out = services.Inbox{} // not kept for the connection's life
	s.parked.done(p)
	switch {
	case end:
		raw.Close()
	case spawn:
		if next != raw || !s.holdIdle(raw) {
			go s.srv.ServeConn(next)
		}
	default:
		s.srv.ServeConn(next)
	}
}

// encode writes the answer's body into body and says its status, as the
// handler and handleError would have sent them.
func (p *parkedCall) encode(body *[]byte) (int, *services.Refusal) {
	if p.err == nil {
		// What json.Marshal would write, less its check of the page's own
		// encoding (services.TestInboxEncoding holds that encoding).
		enc, err := p.out.AppendJSON((*body)[:0])
		if err == nil {
			*body = enc
			return fiber.StatusOK, nil
		}
		p.err = err
	}
	r, unexpected := services.AsRefusal(p.err)
	if unexpected {
		p.s.faults.Report(context.Background(), "request failed", p.err, r, "request_id", p.line.id, "method", p.line.method, "route", p.line.route)
	}
	enc, _ := json.Marshal(services.RefusalBody{Error: r})
	*body = append((*body)[:0], enc...)
	return r.Status, r
}

// end lets go of the call's context and departure watch.
func (p *parkedCall) end() {
	p.stopWatch()
	p.cancel()
	p.mu.Lock()
	handed := p.handed
	p.mu.Unlock()
	if !handed {
		p.s.parked.done(p)
	}
}

// prefixedConn is a connection a byte of which was read ahead.
type prefixedConn struct {
	net.Conn
	first []byte
}

func (c *prefixedConn) Read(b []byte) (int, error) {
	if len(c.first) > 0 {
		n := copy(b, c.first)
		c.first = c.first[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// add counts p in, unless the server shuts down or room (the connections
// the server may still open) is gone.
func (pc *parkedCalls) add(p *parkedCall, room int) bool {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.stopping || len(pc.calls) >= room {
		return false
	}
	if pc.calls == nil {
		pc.calls = map[*parkedCall]bool{}
	}
	pc.calls[p] = true
	pc.wg.Add(1)
	return true
}

// done counts p out (once).
func (pc *parkedCalls) done(p *parkedCall) {
	pc.mu.Lock()
	_, ok := pc.calls[p]
	delete(pc.calls, p)
	pc.mu.Unlock()
	if ok {
		pc.wg.Done()
	}
}

func (pc *parkedCalls) closing() bool {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.stopping
}

// stop answers every parked call at once (what it has: an empty page) with
// its connection closed, and waits for them, at most grace.
func (pc *parkedCalls) stop(grace time.Duration) {
	pc.mu.Lock()
	pc.stopping = true
	for p := range pc.calls {
		p.cancel()
	}
	pc.mu.Unlock()
	done := make(chan struct{})
	go func() { pc.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
	}
}
