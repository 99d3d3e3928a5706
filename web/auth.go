package web

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"parley/services"
)

const callerKey = "parley.caller"

// auth admits the request's bearer token for an operation: it resolves the
// caller and counts the request against the token's rate limits.
func (s *server) auth(operation services.OpName) fiber.Handler {
	return func(c *fiber.Ctx) error {
		who, err := s.forum.Admit(c.UserContext(), bearer(c), operation)
		if err != nil {
			return err
		}
		c.Locals(callerKey, who)
		return c.Next()
	}
}

// bearer reads "Authorization: Bearer <token>"; "" when absent.
func bearer(c *fiber.Ctx) string {
	scheme, token, ok := strings.Cut(c.Get(fiber.HeaderAuthorization), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// caller is the admitted caller of the request.
func caller(c *fiber.Ctx) services.Caller {
	who, _ := c.Locals(callerKey).(services.Caller)
	return who
}
