package web

import "github.com/gofiber/fiber/v2"

// postMessage answers post: the body is the envelope, and the
// Idempotency-Key header, if sent, is its idempotency_key. A replay
// answers 200 instead of 201, with Idempotent-Replayed: true
// (docs/protocol.md §3).
func (s *server) postMessage(c *fiber.Ctx) error {
	out, err := s.forum.PostKeyed(c.UserContext(), caller(c), c.Body(), c.Get("Idempotency-Key"))
	if err != nil {
		return err
	}
	if out.Replayed {
		c.Set("Idempotent-Replayed", "true")
		return writeJSON(c, fiber.StatusOK, out)
	}
	return writeJSON(c, fiber.StatusCreated, out)
}
