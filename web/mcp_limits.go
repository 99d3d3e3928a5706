package web

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// DefaultMCPMaxBytes is the most /mcp reads of one request when Options
// say nothing (mcp.MaxMessageBytes). The API's routes keep
// request_max_bytes; a JSON-RPC message between the two is read, so that
// the MCP transport can answer it with a refusal the agent can act on.
const DefaultMCPMaxBytes = 1 << 20

// mcpFlag marks, on fasthttp's request context, a request for /mcp whose
// path could not be kept (see limitBodies).
const mcpFlag = "parley.mcp"

// isMCPPath reports whether a path is the MCP endpoint as Fiber routes it:
// case-insensitive, with or without a trailing slash.
func isMCPPath(p string) bool {
	return strings.EqualFold(strings.TrimSuffix(p, "/"), "/mcp")
}

// isMCP reports whether a request is for /mcp, and so is answered in
// JSON-RPC whatever goes wrong.
func isMCP(c *fiber.Ctx) bool {
	flagged, _ := c.Context().UserValue(mcpFlag).(bool)
	return flagged || isMCPPath(c.Path())
}

// limitBodies gives /mcp a body limit of its own: Fiber's BodyLimit is one
// for the whole server, so fasthttp's HeaderReceived, which sees each
// request's headers before its body is read, raises it for /mcp alone.
//
// When a body is too large even so, fasthttp resets the request — path
// included, for a chunked body — before its error handler runs. The
// request's header (one per connection, reused) is therefore flagged
// while an /mcp request is read, so that the answer is JSON-RPC still; and
// what the client is still sending is read and dropped for a moment, so
// that it reads the 413 instead of a reset connection.
func (s *server) limitBodies(app *fiber.App, mcpMax int) {
	srv := app.Server()
	var reading sync.Map // *fasthttp.RequestHeader of an /mcp request being read
	srv.HeaderReceived = func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		if isMCPPath(requestPath(h.RequestURI())) {
			reading.Store(h, true)
			return fasthttp.RequestConfig{MaxRequestBodySize: mcpMax}
		}
		reading.Delete(h)
		return fasthttp.RequestConfig{}
	}
	handler := srv.Handler
	srv.Handler = func(fctx *fasthttp.RequestCtx) {
		reading.Delete(&fctx.Request.Header)
		handler(fctx)
	}
	onError := srv.ErrorHandler
	srv.ErrorHandler = func(fctx *fasthttp.RequestCtx, err error) {
		if _, ok := reading.LoadAndDelete(&fctx.Request.Header); ok {
			fctx.SetUserValue(mcpFlag, true)
			if errors.Is(err, fasthttp.ErrBodyTooLarge) {
				drain(fctx.Conn())
			}
		}
		onError(fctx, err)
	}
}

// requestPath is the path of a request target, origin-form or absolute.
func requestPath(target []byte) string {
	p, _, _ := strings.Cut(string(target), "?")
	if !strings.HasPrefix(p, "/") {
		if u, err := url.Parse(p); err == nil {
			return u.Path
		}
	}
	return p
}

// drain reads and drops what a client still sends of a body too large to
// be read, until it pauses, for at most a few seconds and a few MiB.
func drain(conn net.Conn) {
	const (
		most  = 64 << 20
		pause = 250 * time.Millisecond
		total = 3 * time.Second
	)
	end := time.Now().Add(total)
	buf := make([]byte, 32<<10)
	for read := 0; read < most; {
		deadline := time.Now().Add(pause)
		if deadline.After(end) {
			deadline = end
		}
		conn.SetReadDeadline(deadline)
		n, err := conn.Read(buf)
		read += n
		if err != nil { // the client paused, finished or left: answer now
			return
		}
	}
}
