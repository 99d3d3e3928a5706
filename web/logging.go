package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"parley/mcp"
	"parley/services"
)

const (
	requestIDKey = "parley.requestid"
	refusalKey   = "parley.refusal"
	// headerRequestID carries the request's id, both ways.
	headerRequestID = "X-Request-Id"
)

// saneRequestID is what an incoming X-Request-Id may look like to be kept:
// short, and nothing a log line or a header could be forged with.
var saneRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// assignRequestID gives every request an id, sent back as X-Request-Id and
// written in its log line. A trusted proxy's (Options.TrustedProxies) is
// kept when it is sane, so one id follows the request through the proxy's
// logs and ours; any other client's is replaced, since a client could
// otherwise make its requests look like another's.
func (s *server) assignRequestID(c *fiber.Ctx) error {
	id := c.Get(headerRequestID)
	if id == "" || !saneRequestID.MatchString(id) || len(s.trusted) == 0 || !c.IsProxyTrusted() {
		var b [12]byte
		rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	c.Locals(requestIDKey, id)
	c.Set(headerRequestID, id)
	return c.Next()
}

// noteRefusal records the refusal a request was answered with, for its
// log line and the metrics: handleError does it for every refusal it
// renders, and the pages that show a refusal in place call it too.
func noteRefusal(c *fiber.Ctx, r *services.Refusal) {
	if r != nil {
		c.Locals(refusalKey, r)
	}
}

// toolCalls is what the MCP tools of one /mcp request reported (see
// mcp.Observer), for its log line.
type toolCalls struct {
	mu      sync.Mutex
	op      services.OpName
	refusal *services.Refusal
}

// observeTools gives an /mcp request's context an observer that counts
// each tool call in the metrics and keeps the last for the log line.
func (s *server) observeTools(calls *toolCalls) mcp.Observer {
	return func(op services.OpName, took time.Duration, r *services.Refusal) {
		status := fiber.StatusOK
		if r != nil {
			status = r.Status
		}
		s.metrics.observe(bindingMCP, string(op), status, took, r)
		calls.mu.Lock()
		calls.op, calls.refusal = op, r
		calls.mu.Unlock()
	}
}

// logRequests writes one line per request: its id, binding, operation,
// method, route (the pattern, never the path with its ids), status,
// refusal reason and duration, and the identity admitted — never a
// token, a password, a body or a query string. It also counts the request
// in the metrics, when they are on.
func (s *server) logRequests(c *fiber.Ctx) error {
	start := time.Now()
	calls := &toolCalls{}
	if isMCP(c) {
		c.Locals(toolCallsKey, calls)
	}
	if err := c.Next(); err != nil {
		// Render the error now, so the status logged is the one sent.
		if herr := s.handleError(c, err); herr != nil {
			return herr
		}
	}
	if parked, _ := c.Locals(parkedKey).(bool); parked {
		return nil // its line is written when it is answered (inbox_parked.go)
	}
	took := time.Since(start)
	status := c.Response().StatusCode()
	r, _ := c.Locals(refusalKey).(*services.Refusal)
	line := s.lineOf(c)
	calls.mu.Lock()
	if calls.op != "" {
		line.operation = string(calls.op)
		if r == nil {
			r = calls.refusal
		}
	}
	calls.mu.Unlock()
	// A tool call counts itself; /mcp counts here only what the transport
	// refused before any tool ran.
	counted := line.binding != bindingMCP || r != nil && calls.op == ""
	s.writeLine(line, status, r, took, counted)
	return nil
}

// requestLine is what a request's log line says of it besides its answer.
type requestLine struct {
	id, binding, operation, method, route, identity string
}

func (s *server) lineOf(c *fiber.Ctx) requestLine {
	binding, operation := s.metrics.label(c)
	return requestLine{id: requestID(c), binding: binding, operation: operation,
		method: c.Method(), route: c.Route().Path, identity: caller(c).Identity}
}

// writeLine writes a request's log line and, when counted, counts it in the
// metrics.
func (s *server) writeLine(l requestLine, status int, r *services.Refusal, took time.Duration, counted bool) {
	if counted {
		s.metrics.observe(l.binding, l.operation, status, took, r)
	}
	// Typed attributes (LogAttrs): a line for each request, ten thousand
	// at once when one ask wakes every waiting call.
	attrs := make([]slog.Attr, 0, 9)
	attrs = append(attrs,
		slog.String("request_id", l.id),
		slog.String("binding", l.binding),
		slog.String("operation", l.operation),
		slog.String("method", l.method),
		slog.String("route", l.route),
		slog.Int("status", status),
	)
	if r != nil {
		attrs = append(attrs, slog.String("reason", string(r.Reason)))
	}
	attrs = append(attrs, slog.Float64("duration_ms", float64(took.Microseconds())/1000))
	if l.identity != "" {
		attrs = append(attrs, slog.String("identity", l.identity))
	}
	// A 500 is a failure of ours: an error, which the log writes at once
	// (cli.BufferedLogger batches the other lines).
	level := slog.LevelInfo
	if status == fiber.StatusInternalServerError {
		level = slog.LevelError
	}
	s.log.LogAttrs(context.Background(), level, "request", attrs...)
}

const toolCallsKey = "parley.toolcalls"

// mcpRoute serves /mcp through h with the request's tool calls reported
// to the metrics and to its log line (observeTools). A call of a tool that
// answers at once (mcp.Immediate) is served in place when h can be
// (mcpNative: mcp's handlers can), without net/http; the rest — a waiting
// call, whose answer may stream, and every other message — through
// netHTTP.
func (s *server) mcpRoute(h http.Handler) fiber.Handler {
	native, _ := h.(mcpNative)
	h = withDeadline(h, s.timeout)
	return func(c *fiber.Ctx) error {
		calls, _ := c.Locals(toolCallsKey).(*toolCalls)
		if calls == nil {
			calls = &toolCalls{}
		}
		obs := s.observeTools(calls)
		if native != nil && mcp.Immediate(c.Context().PostBody()) {
			s.serveMCP(c, native, obs)
			return nil
		}
		return netHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(mcp.WithObserver(r.Context(), obs)))
		}))(c)
	}
}
