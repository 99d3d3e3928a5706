package web

import (
	"github.com/gofiber/fiber/v2"

	"parley/services"
)

// showClaim answers get_claim.
func (s *server) showClaim(c *fiber.Ctx) error {
	out, err := s.forum.GetClaim(c.UserContext(), caller(c), c.Params("claim"))
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusOK, out)
}

// listClaims answers list_claims.
func (s *server) listClaims(c *fiber.Ctx) error {
	q := services.ClaimsQuery{Thread: c.Query("thread"), Status: c.Query("status"), Cursor: c.Query("cursor"), Limit: c.Query("limit")}
	out, err := s.forum.ListClaims(c.UserContext(), caller(c), q)
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusOK, out)
}
