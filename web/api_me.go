package web

import "github.com/gofiber/fiber/v2"

// me answers whoami.
func (s *server) me(c *fiber.Ctx) error {
	out, err := s.forum.Whoami(c.UserContext(), caller(c))
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusOK, out)
}
