package web

import (
	"github.com/gofiber/fiber/v2"

	"parley/services"
)

// search answers search.
func (s *server) search(c *fiber.Ctx) error {
	q := services.SearchQuery{Q: c.Query("q"), Thread: c.Query("thread"), Kind: c.Query("kind"), Author: c.Query("author"),
		State: c.Query("state"), Cursor: c.Query("cursor"), Limit: c.Query("limit")}
	out, err := s.forum.Search(c.UserContext(), caller(c), q)
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusOK, out)
}
