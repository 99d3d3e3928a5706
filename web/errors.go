package web

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/components"
	"parley/views/pages"
)

// handleError is the one place where an error becomes an HTTP response: a
// refusal keeps its reason and status; Fiber's own errors (body too large,
// malformed request) become invalid_body; anything else is logged with the
// request id and answered 500 internal with a generic message.
func (s *server) handleError(c *fiber.Ctx, err error) error {
	var fe *fiber.Error
	if errors.As(err, &fe) {
		err = s.transportRefusal(fe)
	}
	r, unexpected := services.AsRefusal(err)
	if unexpected {
		s.log.Error("request failed", "request_id", requestID(c), "method", c.Method(), "path", c.Path(), "err", err)
	}
	if r.Reason == services.RateLimited {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(r.RetryAfter))
	}
	if forPeople(c) {
		return s.problemPage(c, r, fe)
	}
	return writeJSON(c, r.Status, services.RefusalBody{Error: r})
}

// forPeople reports whether a request is for the HTML pages rather than
// the API; those get their refusals as a page.
func forPeople(c *fiber.Ctx) bool {
	p := c.Path()
	return !strings.HasPrefix(p, "/api/") && p != "/mcp" && p != "/.well-known/parley.json" && p != "/readyz" && p != "/healthz"
}

// problemPage shows a refusal (or a missing page) to a person.
func (s *server) problemPage(c *fiber.Ctx, r *services.Refusal, fe *fiber.Error) error {
	title, status, message := "Refused", r.Status, ""
	if fe != nil && fe.Code == fiber.StatusNotFound {
		title, status, message, r = "Not found", fe.Code, "There is no page at this address.", nil
	} else if r.Reason == services.Internal || r.Reason == services.Unavailable {
		title = "Something went wrong"
	}
	p := page(c, title, "")
	if isFragment(c) {
		return render(c, status, components.Refusal(r))
	}
	return render(c, status, pages.Problem(p, message, r))
}

// transportRefusal translates what Fiber refuses before a handler runs.
func (s *server) transportRefusal(fe *fiber.Error) error {
	switch fe.Code {
	case fiber.StatusRequestEntityTooLarge:
		return services.Refuse(services.InvalidBody, "the request body exceeds %d bytes (request_max_bytes)", s.forum.Limits().RequestMaxBytes)
	case fiber.StatusNotFound, fiber.StatusMethodNotAllowed:
		return noOperation()
	case fiber.StatusInternalServerError:
		return errors.New(fe.Message)
	}
	return services.Refuse(services.InvalidBody, "malformed request: %s", fe.Message)
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
