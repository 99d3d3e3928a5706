package web

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/pages"
)

// searchShow is the search page. A refused search (a mistyped thread, a
// stale cursor) is shown beside the form, which keeps what was typed.
func (s *server) searchShow(c *fiber.Ctx) error {
	f := pages.SearchFilter{Q: c.Query("q"), Thread: c.Query("thread"), Kind: c.Query("kind"), Author: c.Query("author"), State: c.Query("state")}
	view, status := pages.SearchView{Filter: f}, fiber.StatusOK
	if strings.TrimSpace(f.Q) != "" {
		q := services.SearchQuery{Q: f.Q, Thread: f.Thread, Kind: f.Kind, Author: f.Author, State: f.State,
			Cursor: c.Query("cursor"), Limit: c.Query("limit")}
		res, err := s.forum.Search(c.UserContext(), caller(c), q)
		var r *services.Refusal
		switch {
		case errors.As(err, &r):
			noteRefusal(c, r)
			view.Refusal, status = r, r.Status
		case err != nil:
			return err
		default:
			view.Page = &res
			if res.Cursor != nil {
				view.Next = withQuery(c, map[string]string{"cursor": *res.Cursor})
			}
		}
	}
	p := page(c, "Search", "search")
	p.Query = f.Q
	return render(c, status, pages.Search(p, view))
}
