package web

import (
	"hash/fnv"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/pages"
)

// overdueList shows the escalated threads, oldest deadline first, with who
// failed to answer (docs/protocol.md §14 rule 4); /overdue/live answers its
// polling (204 while the list is unchanged).
func (s *server) overdueList(c *fiber.Ctx) error {
	items, err := s.forum.Overdue(c.UserContext(), caller(c))
	if err != nil {
		return err
	}
	version := overdueVersion(items)
	if c.Path() != "/overdue/live" {
		return render(c, fiber.StatusOK, pages.Overdue(page(c, "Overdue", "overdue"), items, version))
	}
	if c.Query("v") == version {
		return c.SendStatus(fiber.StatusNoContent)
	}
	return render(c, fiber.StatusOK, pages.OverdueList(items, version))
}

// overdueVersion changes whenever an item comes, goes or moves.
func overdueVersion(items []services.OverdueItem) string {
	h := fnv.New64a()
	for _, it := range items {
		h.Write([]byte(it.Thread.ID + it.Thread.UpdatedAt.String() + "\n"))
	}
	return strconv.FormatUint(h.Sum64(), 36)
}
