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
	// An identifier typed into the box leads straight to what it names.
	loc, isRef, err := s.forum.Locate(c.UserContext(), caller(c), f.Q)
	var refused *services.Refusal
	switch {
	case errors.As(err, &refused) && refused.Reason == services.IdentityNotFound:
		// "word:word" may be words too: they are searched, and the page
		// says no participant goes by that name.
		view.Refusal, view.NotFound, isRef = refused, strings.TrimSpace(f.Q), false
	case errors.As(err, &refused):
		noteRefusal(c, refused)
		view.Refusal, view.NotFound, status = refused, strings.TrimSpace(f.Q), refused.Status
	case err != nil:
		return err
	case isRef && loc.Message != "":
		return c.Redirect("/threads/"+loc.Thread+"#"+loc.Message, fiber.StatusSeeOther)
	case isRef && loc.Claim != "":
		return c.Redirect("/claims/"+loc.Claim, fiber.StatusSeeOther)
	case isRef && loc.Thread != "":
		return c.Redirect("/threads/"+loc.Thread, fiber.StatusSeeOther)
	case isRef && loc.Identity != "":
		// An identity: its messages, newest first, by the author filter.
		view.Identity, view.Filter.Author, view.Filter.Q = loc.Identity, loc.Identity, ""
		f = view.Filter
	}
	if strings.TrimSpace(f.Q) != "" && !isRef {
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
