package web

import (
	"github.com/gofiber/fiber/v2"

	"parley/services"
)

// listIdentities answers list_identities: the directory.
func (s *server) listIdentities(c *fiber.Ctx) error {
	q := services.IdentitiesQuery{Cursor: c.Query("cursor"), Limit: c.Query("limit")}
	out, err := s.forum.ListIdentities(c.UserContext(), caller(c), q)
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusOK, out)
}
