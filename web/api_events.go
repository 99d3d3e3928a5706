package web

import (
	"github.com/gofiber/fiber/v2"

	"parley/services"
)

// events answers get_events.
func (s *server) events(c *fiber.Ctx) error {
	q := services.EventsQuery{Thread: c.Query("thread"), Since: c.Query("since"), Limit: c.Query("limit"), Wait: c.Query("wait")}
	out, err := s.forum.Events(c.UserContext(), caller(c), q)
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusOK, out)
}
