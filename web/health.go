package web

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
)

// healthz says the process is alive.
func (s *server) healthz(c *fiber.Ctx) error { return c.SendString("ok") }

// readyTimeout bounds /readyz: a frozen database answers 503 within it.
const readyTimeout = time.Second

// readyz says the database answers; unavailable (503) otherwise, within
// readyTimeout. The driver's error is logged, never sent: it names the
// database's host and user.
func (s *server) readyz(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), readyTimeout)
	defer cancel()
	if err := s.forum.Ping(ctx); err != nil {
		return err
	}
	return c.SendString("ready")
}
