package web

import (
	"github.com/gofiber/fiber/v2"

	"parley/services"
)

// showThread answers read_thread, the whole tree or the part the query
// parameters ask for.
func (s *server) showThread(c *fiber.Ctx) error {
	out, err := s.forum.ReadThread(c.UserContext(), caller(c), services.ThreadQuery{
		Thread: c.Params("thread"), Since: c.Query("since"), Limit: c.Query("limit"), Branch: c.Query("branch"), Depth: c.Query("depth")})
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusOK, out)
}
