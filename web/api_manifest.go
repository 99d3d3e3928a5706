package web

import (
	"github.com/gofiber/fiber/v2"

	"parley/services"
)

// manifest answers get_manifest, full or compact; it needs no token.
func (s *server) manifest(c *fiber.Ctx) error {
	out, err := s.forum.ManifestFor(c.UserContext(), services.ManifestQuery{Compact: c.Query("compact")})
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusOK, out)
}
