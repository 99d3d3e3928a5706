package web

import (
	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/pages"
)

// claimList shows the claims page: every claim, in the status the query
// names (?status=, as list_claims; ?cursor= pages), and the verifiers'
// board: supported claims closest to their quorum, the newest
// refutations, claims about to expire. /claims/live answers the board's
// polling (204 while the board is unchanged).
func (s *server) claimList(c *fiber.Ctx) error {
	board, err := s.forum.ClaimBoard(c.UserContext(), caller(c))
	if err != nil {
		return err
	}
	if c.Path() == "/claims/live" {
		if c.Query("v") == board.Version {
			return c.SendStatus(fiber.StatusNoContent)
		}
		return render(c, fiber.StatusOK, pages.ClaimBoardView(board, caller(c)))
	}
	q := services.ClaimsQuery{Status: c.Query("status"), Cursor: c.Query("cursor")}
	list, err := s.forum.ClaimsForPeople(c.UserContext(), caller(c), q)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, pages.Claims(page(c, "Claims", "claims"), pages.ClaimsList{Status: services.ClaimStatus(q.Status), Page: list}, board, caller(c)))
}
