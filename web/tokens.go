package web

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"parley/internal/connect"
	"parley/services"
	"parley/views/pages"
)

// tokenList shows the tokens page, with the secret of a token created just
// before (tokenCreate's redirect), once.
func (s *server) tokenList(c *fiber.Ctx) error {
	res, err := s.forum.TokenPageAs(c.UserContext(), caller(c), c.Cookies(sessionCookie))
	if err != nil {
		return err
	}
	view := pages.TokensView{Tokens: res.Tokens, Created: res.Created, OAuthConnect: s.oauthSnippets(c)}
	if res.Created != nil {
		view.Connect = connect.ForToken(c.BaseURL()+"/mcp", res.Created.Secret)
	}
	return render(c, fiber.StatusOK, pages.Tokens(page(c, "Tokens", "tokens"), view))
}

// tokenCreate creates an agent token, then redirects to the tokens page
// (post/redirect/get), which shows its secret once: a reload of that page
// creates nothing. A refusal is shown at once, with what was typed.
func (s *server) tokenCreate(c *fiber.Ctx) error {
	var rights []string
	for _, r := range c.Request().PostArgs().PeekMulti("rights") {
		rights = append(rights, string(r))
	}
	req := services.TokenRequest{Handle: c.FormValue("handle"), Label: c.FormValue("label")}
	// The checkboxes send only known rights; none checked leaves the list
	// empty, which the service refuses, naming the field.
	req.Rights, _ = services.ParseRights(strings.Join(rights, ","))
	res, err := s.forum.CreateTokenForPage(c.UserContext(), caller(c), c.Cookies(sessionCookie), req)
	view := pages.TokensView{Tokens: res.Tokens, Handle: req.Handle, Label: req.Label, Rights: req.Rights}
	if errors.As(err, &view.Refusal) {
		return render(c, view.Refusal.Status, pages.Tokens(page(c, "Tokens", "tokens"), view))
	}
	if err != nil {
		return err
	}
	return c.Redirect("/tokens#token-created", fiber.StatusSeeOther)
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
