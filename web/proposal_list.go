package web

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/pages"
)

// proposalList shows every thread whose state is unconfirmed; /proposals/live
// answers its polling (204 while the set is unchanged).
func (s *server) proposalList(c *fiber.Ctx) error {
	q := services.ListQuery{Confirmed: "false", Limit: strconv.Itoa(s.forum.Limits().PageMax)}
	res, err := s.forum.ListThreads(c.UserContext(), caller(c), q)
	if err != nil {
		return err
	}
	version := listVersion(res.Threads)
	p := page(c, "Proposals", "proposals")
	if c.Path() != "/proposals/live" {
		return render(c, fiber.StatusOK, pages.Proposals(p, res.Threads, version))
	}
	if c.Query("v") == version {
		return c.SendStatus(fiber.StatusNoContent)
	}
	return render(c, fiber.StatusOK, pages.ProposalList(res.Threads, version, p.CSRF))
}
