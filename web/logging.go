package web

import (
	"time"

	"github.com/gofiber/fiber/v2"
)

const requestIDKey = "requestid" // where Fiber's requestid middleware puts it

// logRequests writes one structured line per request: method, route,
// status, duration, identity and request id — never the token.
func (s *server) logRequests(c *fiber.Ctx) error {
	start := time.Now()
	if err := c.Next(); err != nil {
		// Render the error now, so the status logged is the one sent.
		if herr := s.handleError(c, err); herr != nil {
			return herr
		}
	}
	s.log.Info("request",
		"method", c.Method(),
		"route", c.Route().Path,
		"status", c.Response().StatusCode(),
		"duration_ms", float64(time.Since(start).Microseconds())/1000,
		"identity", caller(c).Identity,
		"request_id", requestID(c),
	)
	return nil
}
