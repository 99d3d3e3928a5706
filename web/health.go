package web

import "github.com/gofiber/fiber/v2"

// healthz says the process is alive.
func (s *server) healthz(c *fiber.Ctx) error { return c.SendString("ok") }

// readyz says the database answers; unavailable (503) otherwise.
func (s *server) readyz(c *fiber.Ctx) error {
	if err := s.forum.Ping(c.UserContext()); err != nil {
		return err
	}
	return c.SendString("ready")
}
