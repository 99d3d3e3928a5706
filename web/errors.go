package web

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/components"
	"parley/views/layout"
	"parley/views/pages"
)

// handleError is the one place where an error becomes an HTTP response: a
// refusal keeps its reason and status; Fiber's own errors (body too large,
// malformed request) become invalid_body; anything else is logged with the
// request id (internal/faultlog) and answered 500 internal with a generic message, or
// 503 unavailable when storage is unreachable.
func (s *server) handleError(c *fiber.Ctx, err error) error {
	var fe *fiber.Error
	if errors.As(err, &fe) {
		err = s.transportRefusal(c, fe)
	}
	r, unexpected := services.AsRefusal(err)
	if unexpected {
		s.faults.Report(c.Context(), "request failed", err, r, "request_id", requestID(c), "method", c.Method(), "path", c.Path())
	}
	noteRefusal(c, r)
	retryAfter(c, r)
	switch {
	case isMCP(c):
		return writeJSON(c, r.Status, jsonRPCError(r))
	case forPeople(c):
		return s.problemPage(c, r, fe)
	}
	return writeJSON(c, r.Status, services.RefusalBody{Error: r})
}

// retryAfter sets Retry-After for a rate_limited refusal, on the API's
// answers and on the pages' alike (a form refused because its human posts
// too fast comes back in place, the header says when to send it again).
func retryAfter(c *fiber.Ctx, r *services.Refusal) {
	if r != nil && r.Reason == services.RateLimited {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(r.RetryAfter))
	}
}

// forPeople reports whether a request is for the HTML pages rather than
// the API; those get their refusals as a page. A request whose path could
// not be read (a garbage request line) gets the refusal object.
func forPeople(c *fiber.Ctx) bool {
	p := c.Path()
	return p != "" && p != "/" && !strings.HasPrefix(p, "/api/") && !isMCP(c) &&
		p != "/.well-known/parley.json" && p != "/readyz" && p != "/healthz" && p != "/metrics" && utf8.ValidString(p)
}

// jsonRPCError is a refusal that reached /mcp before the MCP transport
// could read the request (too large, malformed HTTP): a JSON-RPC error with
// no id, the refusal object as its data.
func jsonRPCError(r *services.Refusal) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
		"code": -32600, "message": r.Message, "data": services.RefusalBody{Error: r}}}
}

// problemPage shows a refusal (or a missing page) to a person, with the
// site's navigation when a human is signed in (see pageFor) and a way on.
func (s *server) problemPage(c *fiber.Ctx, r *services.Refusal, fe *fiber.Error) error {
	if isFragment(c) {
		return render(c, r.Status, components.Refusal(r))
	}
	title, status, message := "Refused", r.Status, components.Plain(r.Reason)
	switch {
	case fe != nil && (fe.Code == fiber.StatusNotFound || fe.Code == fiber.StatusMethodNotAllowed):
		title, status, message, r = "Page not found", fe.Code, "There is no page at this address. It may have moved, or the link may be mistyped.", nil
	case r.Status == fiber.StatusNotFound:
		title = "Not found"
	case r.Reason == services.Internal || r.Reason == services.Unavailable:
		title = "Something went wrong"
	}
	if r != nil {
		message = "" // the refusal says it, plain sentence first
	}
	return render(c, status, pages.Problem(s.pageFor(c, title), message, r))
}

// pageFor is the frame of a page that anyone may see (a missing page, a
// setup link): behind s.human it is the signed-in frame; elsewhere the
// session cookie, if any, is read so that a signed-in human keeps the
// navigation. A session that does not resolve simply shows the page
// signed out.
func (s *server) pageFor(c *fiber.Ctx, title string) layout.Page {
	if caller(c).Identity != "" {
		return page(c, title, "")
	}
	if cookie := c.Cookies(sessionCookie); cookie != "" {
		if sess, err := s.forum.SessionCaller(c.UserContext(), cookie); err == nil {
			c.Set(fiber.HeaderCacheControl, "no-store")
			return layout.Page{Title: title, Identity: sess.Caller.Identity, CSRF: sess.CSRF}
		}
	}
	return layout.Page{Title: title}
}

// transportRefusal translates what Fiber and fasthttp refuse before a
// handler runs. Their messages are never passed on: fasthttp's parse errors
// quote the request, headers (a bearer token) included.
//
// Reading: §2.2 gives invalid_body 400, but a body or header block too
// large to read is better told by its own status, which HTTP clients and
// proxies act on: 413 and 431, with reason invalid_body and the status in
// the object equal to the HTTP status, as §2.2 requires.
func (s *server) transportRefusal(c *fiber.Ctx, fe *fiber.Error) error {
	switch fe.Code {
	case fiber.StatusRequestEntityTooLarge:
		r := services.Refuse(services.InvalidBody, "the request body exceeds %d bytes (request_max_bytes)", s.forum.Limits().RequestMaxBytes)
		if isMCP(c) {
			r = services.Refuse(services.InvalidBody, "a message may be at most %d bytes; this one was not read", s.mcpMax)
		} else if isBlobsPath(c.Path()) {
			r = services.Refuse(services.InvalidBody, "a blob may be at most %d bytes (blob_max_bytes); this one was not read", s.forum.Limits().BlobMaxBytes).On("data")
		}
		r.Status = fiber.StatusRequestEntityTooLarge
		return r
	case fiber.StatusRequestHeaderFieldsTooLarge:
		r := services.Refuse(services.InvalidBody, "the request line or headers are too large")
		r.Status = fiber.StatusRequestHeaderFieldsTooLarge
		return r
	case fiber.StatusRequestTimeout:
		return services.Refuse(services.InvalidBody, "the request was not received in time")
	case fiber.StatusNotFound, fiber.StatusMethodNotAllowed:
		return noOperation()
	case fiber.StatusInternalServerError:
		return errors.New(fe.Message)
	}
	return services.Refuse(services.InvalidBody, "malformed HTTP request: it could not be read (request line, headers, Content-Length or chunked encoding)")
}

// noSuchOperation answers API paths that name no operation.
//
// Reading: §2.2 has no reason for an unknown route; it is a request that
// could not be used, so it is invalid_body (400) with field "path".
func (s *server) noSuchOperation(*fiber.Ctx) error { return noOperation() }

func noOperation() error {
	return services.Refuse(services.InvalidBody, "no operation at this method and path; see operations in GET /api/v1/manifest").On("path")
}

func requestID(c *fiber.Ctx) string {
	id, _ := c.Locals(requestIDKey).(string)
	return id
}
