package web

import (
	"encoding/base64"
	"errors"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"parley/services"
)

// DefaultMCPMaxBytes is the most /mcp reads of one request when Options
// say nothing (mcp.MaxMessageBytes). The API's routes keep
// request_max_bytes; a JSON-RPC message between the two is read, so that
// the MCP transport can answer it with a refusal the agent can act on.
const DefaultMCPMaxBytes = 1 << 20

// mcpMaxFor is the most /mcp reads when Options say nothing: at least
// DefaultMCPMaxBytes, and enough for put_blob's largest blob in base64
// (docs/protocol.md §15.4) with room for the JSON-RPC around it.
func mcpMaxFor(l services.Limits) int {
	return max(DefaultMCPMaxBytes, base64.StdEncoding.EncodedLen(l.BlobMaxBytes)+64<<10)
}

// isBlobsPath reports whether a path is put_blob's, whose body is a blob's
// bytes, up to blob_max_bytes rather than request_max_bytes.
func isBlobsPath(p string) bool {
	return strings.EqualFold(strings.TrimSuffix(p, "/"), "/api/v1/blobs")
}

// mcpFlag marks, on fasthttp's request context, a request for /mcp whose
// path could not be kept (see limitBodies).
const mcpFlag = "parley.mcp"

// isMCPPath reports whether a path is the MCP endpoint as Fiber routes it:
// case-insensitive, with or without a trailing slash.
func isMCPPath(p string) bool {
	p = strings.TrimSuffix(p, "/")
	return strings.EqualFold(p, "/mcp") || strings.EqualFold(p, "/mcp/oauth")
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
//
// put_blob's route gets blob_max_bytes the same way, and a body too large
// is drained as well; without the flag, its refusal is the API's JSON.
func (s *server) limitBodies(app *fiber.App, mcpMax, blobMax int) {
	srv := app.Server()
	var reading sync.Map // *fasthttp.RequestHeader of an /mcp request being read
	srv.HeaderReceived = func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		p := requestPath(h.RequestURI())
		if isBlobsPath(p) {
			reading.Store(h, false) // drained when too large, answered in the API's JSON
			return fasthttp.RequestConfig{MaxRequestBodySize: blobMax}
		}
		if s.mcp != nil && isMCPPath(p) {
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
		if v, ok := reading.LoadAndDelete(&fctx.Request.Header); ok {
			if v.(bool) {
				fctx.SetUserValue(mcpFlag, true)
			}
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
