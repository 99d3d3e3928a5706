package web

import (
	"github.com/gofiber/fiber/v2"

	"parley/services"
)

// listThreads answers list_threads.
func (s *server) listThreads(c *fiber.Ctx) error {
	q := services.ListQuery{State: c.Query("state"), Confirmed: c.Query("confirmed"), Cursor: c.Query("cursor"), Limit: c.Query("limit")}
	out, err := s.forum.ListThreads(c.UserContext(), caller(c), q)
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusOK, out)
}
