package web

import (
	"bytes"
	"context"
	"net/http"
	"net/url"

	"github.com/gofiber/fiber/v2"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/valyala/fasthttp"

	"parley/mcp"
)

// mcpNative is an MCP handler that serves a request without net/http
// (mcp.HTTPHandler's and mcp.OAuthHandler's do: mcp-go's transport-neutral
// Handle behind Parley's gate).
type mcpNative interface {
	Handle(w mcpserver.HTTPResponseWriter, r *mcpserver.HTTPRequest)
}

// serveMCP serves a message whose answer is one JSON response
// (mcp.Immediate) on the request's own goroutine, the answer written into
// Fiber's response: none of netHTTP's copy of the request into net/http,
// goroutine, pipe and watch of the client, which only a waiting call
// needs. The context is the one netHTTP gives (withDeadline's), with the
// request's observer.
func (s *server) serveMCP(c *fiber.Ctx, h mcpNative, obs mcp.Observer) {
	fctx := c.Context()
	ctx, cancel := context.WithTimeout(mcp.WithObserver(context.Background(), obs), s.timeout)
	defer cancel()
	header := make(http.Header, 8)
	fctx.Request.Header.VisitAll(func(k, v []byte) { header.Add(string(k), string(v)) })
	w := &fiberWriter{resp: &fctx.Response, header: http.Header{}, status: http.StatusOK}
	h.Handle(w, &mcpserver.HTTPRequest{
		Method:  string(fctx.Method()),
		URL:     &url.URL{Host: string(fctx.Host()), Path: string(fctx.Path())},
		Header:  header,
		Body:    bytes.Clone(fctx.PostBody()), // nothing of the library's may keep fasthttp's buffer
		Context: ctx,
	})
	fctx.SetStatusCode(w.status)
	for k, vv := range w.header {
		for _, v := range vv {
			fctx.Response.Header.Add(k, v)
		}
	}
}

// fiberWriter writes an answer into Fiber's response, whole: it cannot
// stream, and says so (CanStream), so the library never starts an SSE
// stream on it.
type fiberWriter struct {
	resp   *fasthttp.Response
	header http.Header
	status int
	wrote  bool
}

func (w *fiberWriter) Header() http.Header { return w.header }

func (w *fiberWriter) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
}

func (w *fiberWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.resp.AppendBody(p)
	return len(p), nil
}

func (w *fiberWriter) Flush() {}

func (w *fiberWriter) CanStream() bool { return false }
