package web

import "github.com/gofiber/fiber/v2"

// manifest answers get_manifest; it needs no token.
func (s *server) manifest(c *fiber.Ctx) error {
	return writeJSON(c, fiber.StatusOK, s.forum.Manifest(c.UserContext()))
}
