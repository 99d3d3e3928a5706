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
// database's host and user. A server whose LISTEN connection is down or
// hears nothing answers "degraded: " and why (services.FeedProblem).
//
// Reading: degraded is still 200, ready to serve: its waiting reads poll
// instead of being woken, correct but costlier, and a load balancer that
// took every such server out would turn a misconfiguration into an outage.
func (s *server) readyz(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), readyTimeout)
	defer cancel()
	if err := s.forum.Ping(ctx); err != nil {
		return err
	}
	if problem := s.forum.FeedProblem(); problem != "" {
		return c.SendString("degraded: " + problem)
	}
	return c.SendString("ready")
}
