package web

import "github.com/gofiber/fiber/v2"

// confirmThread answers confirm: body {"state": "..."}.
func (s *server) confirmThread(c *fiber.Ctx) error {
	out, err := s.forum.Confirm(c.UserContext(), caller(c), c.Params("thread"), c.Body())
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusOK, out)
}
