package web

import (
	"github.com/gofiber/fiber/v2"

	"parley/services"
)

// me answers whoami; extension counts the inbox as that extension sees it.
func (s *server) me(c *fiber.Ctx) error {
	out, err := s.forum.Whoami(c.UserContext(), caller(c), services.WhoamiQuery{Extension: c.Query("extension")})
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusOK, out)
}
