package web

import "github.com/gofiber/fiber/v2"

// claimShow leads a claim reference (supersedes, superseded by) to the
// claim in its thread.
func (s *server) claimShow(c *fiber.Ctx) error {
	v, err := s.forum.GetClaim(c.UserContext(), caller(c), c.Params("claim"))
	if err != nil {
		return err
	}
	return c.Redirect("/threads/"+v.Claim.Thread+"#"+v.Claim.ID, fiber.StatusSeeOther)
}
