package web

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"parley/services"
)

const callerKey = "parley.caller"

// auth admits the request's bearer token for an operation: it resolves the
// caller and counts the request against the token's rate limits.
//
// A request that answers at once waits for its turn at the database
// first (services.Forum.Turn), and gives it back once handled, before its
// answer is written; a waiting read (?wait=N) and a stream take none.
func (s *server) auth(operation services.OpName) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if !mayWait(c, operation) {
			release, err := s.forum.Turn(c.UserContext())
			if err != nil {
				return err
			}
			defer release()
		}
		who, err := s.forum.Admit(c.UserContext(), bearer(c), operation)
		if err != nil {
			return err
		}
		c.Locals(callerKey, who)
		return c.Next()
	}
}

// mayWait tells a request that may wait (a stream, a read with ?wait
// other than 0) from one that answers at once.
func mayWait(c *fiber.Ctx, operation services.OpName) bool {
	w := c.Query("wait")
	return operation == services.OpStream || w != "" && w != "0"
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
