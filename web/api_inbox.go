package web

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"parley/services"
)

// inbox answers inbox.
func (s *server) inbox(c *fiber.Ctx) error {
	q := services.InboxQuery{Extension: c.Query("extension"), Since: c.Query("since"), Limit: c.Query("limit"), Wait: c.Query("wait"), Addressed: c.Query("addressed")}
	if p := s.park(c); p != nil {
		// Fiber's strings are views of the request's buffer, which fasthttp
		// reuses once the handler has returned.
		q = services.InboxQuery{Extension: strings.Clone(q.Extension), Since: strings.Clone(q.Since), Limit: strings.Clone(q.Limit), Wait: strings.Clone(q.Wait), Addressed: strings.Clone(q.Addressed)}
		s.forum.InboxThen(p.ctx, caller(c), q, p.answer)
		return p.handOff(c)
	}
	out, err := s.forum.Inbox(c.UserContext(), caller(c), q)
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusOK, out)
}
