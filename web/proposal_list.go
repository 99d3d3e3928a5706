package web

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/components"
	"parley/views/layout"
	"parley/views/pages"
)

// proposalList shows the moderators' queue: every thread whose state is
// unconfirmed, with the act that proposed it. /proposals/live answers its
// live refresh (204 while the set is unchanged).
func (s *server) proposalList(c *fiber.Ctx) error {
	q, err := s.forum.Proposals(c.UserContext(), caller(c))
	if err != nil {
		return err
	}
	threads := make([]services.Thread, len(q.Proposals))
	for i, p := range q.Proposals {
		threads[i] = p.Thread
	}
	version := listVersion(threads)
	p := page(c, "Proposals", "proposals")
	if c.Path() != "/proposals/live" {
		if id, ok := services.ParseThreadRef(c.Query("thread")); ok {
			if r := refusedOf(c); r != nil {
				c.SetUserContext(components.WithRefusal(c.UserContext(), services.ThreadKey(id), r))
			}
		}
		return render(c, fiber.StatusOK, pages.Proposals(p, q, version, settledOf(c)))
	}
	if c.Query("v") == version {
		return c.SendStatus(fiber.StatusNoContent)
	}
	return render(c, fiber.StatusOK, pages.ProposalList(q, version, p.CSRF))
}

// pendingCount answers the navigation's count of pending proposals: 204
// while it is the count the page shows (v).
func (s *server) pendingCount(c *fiber.Ctx) error {
	n, err := s.forum.PendingCount(c.UserContext(), caller(c))
	if err != nil {
		return err
	}
	if c.Query("v") == strconv.Itoa(n) {
		return c.SendStatus(fiber.StatusNoContent)
	}
	return render(c, fiber.StatusOK, layout.PendingCount(n))
}

// navCount lets the navigation of a signed-in page show how many
// proposals are pending (layout.WithPending). It runs before s.human, so
// it counts only when a page renders its navigation, as whoever signed in.
func (s *server) navCount(c *fiber.Ctx) error {
	c.SetUserContext(layout.WithPending(c.UserContext(), func() (int, bool) {
		who := caller(c)
		if who.Identity == "" {
			return 0, false
		}
		n, err := s.forum.PendingCount(c.UserContext(), who)
		return n, err == nil
	}))
	c.SetUserContext(layout.WithOverdue(c.UserContext(), func() (int, bool) {
		who := caller(c)
		if who.Identity == "" {
			return 0, false
		}
		n, err := s.forum.OverdueCount(c.UserContext(), who)
		return n, err == nil
	}))
	return c.Next()
}
