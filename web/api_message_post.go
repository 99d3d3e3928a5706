package web

import "github.com/gofiber/fiber/v2"

// postMessage answers post: the body is the envelope.
func (s *server) postMessage(c *fiber.Ctx) error {
	out, err := s.forum.Post(c.UserContext(), caller(c), c.Body())
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusCreated, out)
}
