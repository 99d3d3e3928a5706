package web

import "github.com/gofiber/fiber/v2"

// getStatement answers get_statement.
func (s *server) getStatement(c *fiber.Ctx) error {
	out, err := s.forum.GetStatement(c.UserContext(), caller(c), c.Params("id"))
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusOK, out)
}

// keys serves the instance's public keys, without a token
// (docs/protocol.md §15.5), for verifiers of its statements.
func (s *server) keys(c *fiber.Ctx) error {
	out, err := s.forum.Keys(c.UserContext())
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusOK, out)
}
