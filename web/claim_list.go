package web

import (
	"github.com/gofiber/fiber/v2"

	"parley/views/pages"
)

// claimList shows the verifiers' board: supported claims waiting for a
// seal, the newest refutations, claims about to expire. /claims/live
// answers its polling (204 while the board is unchanged).
func (s *server) claimList(c *fiber.Ctx) error {
	board, err := s.forum.ClaimBoard(c.UserContext(), caller(c))
	if err != nil {
		return err
	}
	if c.Path() != "/claims/live" {
		return render(c, fiber.StatusOK, pages.Claims(page(c, "Claims", "claims"), board, caller(c)))
	}
	if c.Query("v") == board.Version {
		return c.SendStatus(fiber.StatusNoContent)
	}
	return render(c, fiber.StatusOK, pages.ClaimBoardView(board, caller(c)))
}
