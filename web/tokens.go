package web

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/pages"
)

// tokenList shows the tokens page.
func (s *server) tokenList(c *fiber.Ctx) error {
	res, err := s.forum.TokenPageAs(c.UserContext(), caller(c), nil)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, pages.Tokens(page(c, "Tokens", "tokens"), pages.TokensView{Tokens: res.Tokens}))
}

// tokenCreate creates an agent token and shows its secret, once.
func (s *server) tokenCreate(c *fiber.Ctx) error {
	var rights []string
	for _, r := range c.Request().PostArgs().PeekMulti("rights") {
		rights = append(rights, string(r))
	}
	req := services.TokenRequest{Handle: c.FormValue("handle"), Label: c.FormValue("label")}
	// The checkboxes send only known rights; none checked leaves the list
	// empty, which the service refuses, naming the field.
	req.Rights, _ = services.ParseRights(strings.Join(rights, ","))
	res, err := s.forum.TokenPageAs(c.UserContext(), caller(c), &req)
	view := pages.TokensView{Tokens: res.Tokens, Created: res.Created}
	if err != nil && !errors.As(err, &view.Refusal) {
		return err
	}
	status := fiber.StatusOK
	if view.Refusal != nil {
		status, view.Handle, view.Label = view.Refusal.Status, req.Handle, req.Label
	}
	return render(c, status, pages.Tokens(page(c, "Tokens", "tokens"), view))
}

// tokenRevoke revokes a token; htmx swaps its row.
func (s *server) tokenRevoke(c *fiber.Ctx) error {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil {
		return services.Refuse(services.InvalidBody, "a token id is a number").On("id")
	}
	tok, err := s.forum.RevokeTokenAs(c.UserContext(), caller(c), id)
	if err != nil {
		return err
	}
	if !isFragment(c) {
		return c.Redirect("/tokens", fiber.StatusSeeOther)
	}
	return render(c, fiber.StatusOK, pages.TokenRow(tok, csrfToken(c)))
}
