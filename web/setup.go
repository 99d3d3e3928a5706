package web

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/layout"
	"parley/views/pages"
)

// setupForm shows the first-run form, if the link is valid.
func (s *server) setupForm(c *fiber.Ctx) error {
	token := c.Params("token")
	if err := s.forum.CheckSetup(c.UserContext(), token); err != nil {
		var r *services.Refusal
		if errors.As(err, &r) && r.Reason == services.TokenInvalid {
			return render(c, r.Status, pages.SetupUsed(s.pageFor(c, "This setup link no longer works"), r))
		}
		return err
	}
	p := layout.Page{Title: "Set up Parley", CSRF: formToken(c)}
	return render(c, fiber.StatusOK, pages.Setup(p, token, "", nil))
}

// setup creates the first human account and signs it in.
func (s *server) setup(c *fiber.Ctx) error {
	token, name := c.Params("token"), c.FormValue("name")
	var sess services.Session
	var err error = services.Refuse(services.TokenInvalid, "this form is out of date; try again")
	if sameToken(c.FormValue("_csrf"), c.Cookies(formCookie)) {
		sess, err = s.forum.CompleteSetup(c.UserContext(), token, name, c.FormValue("password"))
	}
	var r *services.Refusal
	if errors.As(err, &r) {
		noteRefusal(c, r)
		p := layout.Page{Title: "Set up Parley", CSRF: formToken(c)}
		return render(c, r.Status, pages.Setup(p, token, name, r))
	}
	if err != nil {
		return err
	}
	setSession(c, sess.Token)
	return redirect(c, "/threads")
}
