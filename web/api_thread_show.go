package web

import "github.com/gofiber/fiber/v2"

// showThread answers read_thread.
func (s *server) showThread(c *fiber.Ctx) error {
	out, err := s.forum.ReadThread(c.UserContext(), caller(c), c.Params("thread"))
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusOK, out)
}
