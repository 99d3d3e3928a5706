package web

import (
	"github.com/gofiber/fiber/v2"

	"parley/services"
)

// inbox answers inbox.
func (s *server) inbox(c *fiber.Ctx) error {
	q := services.InboxQuery{Extension: c.Query("extension"), Since: c.Query("since"), Limit: c.Query("limit"), Wait: c.Query("wait"), Addressed: c.Query("addressed")}
	out, err := s.forum.Inbox(c.UserContext(), caller(c), q)
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusOK, out)
}
