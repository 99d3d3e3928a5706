package web

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/layout"
	"parley/views/pages"
)

// signInForm shows the sign-in form.
func (s *server) signInForm(c *fiber.Ctx) error {
	p := layout.Page{Title: "Sign in", CSRF: formToken(c)}
	return render(c, fiber.StatusOK, pages.SignIn(p, "", c.Query("next"), nil))
}

// signIn checks the name and password and opens a session.
func (s *server) signIn(c *fiber.Ctx) error {
	name, next := c.FormValue("name"), c.FormValue("next")
	sess, err := s.signInChecked(c, name)
	var r *services.Refusal
	if errors.As(err, &r) {
		noteRefusal(c, r)
		p := layout.Page{Title: "Sign in", CSRF: formToken(c)}
		return render(c, r.Status, pages.SignIn(p, name, next, r))
	}
	if err != nil {
		return err
	}
	setSession(c, sess.Token)
	return redirect(c, safeNext(next))
}

func (s *server) signInChecked(c *fiber.Ctx, name string) (services.Session, error) {
	if !sameToken(c.FormValue("_csrf"), c.Cookies(formCookie)) {
		return services.Session{}, services.Refuse(services.TokenInvalid, "this form is out of date; try again")
	}
	return s.forum.SignIn(c.UserContext(), name, c.FormValue("password"), s.clientIP(c))
}

// signOut ends the session.
func (s *server) signOut(c *fiber.Ctx) error {
	if err := s.forum.SignOut(c.UserContext(), c.Cookies(sessionCookie)); err != nil {
		return err
	}
	c.ClearCookie(sessionCookie)
	return redirect(c, "/signin")
}

// formToken returns the double-submit CSRF token of a form shown before a
// session exists, setting its cookie when there is none yet.
func formToken(c *fiber.Ctx) string {
	if t := c.Cookies(formCookie); len(t) == 64 {
		return t
	}
	b := make([]byte, 32)
	rand.Read(b)
	t := hex.EncodeToString(b)
	c.Cookie(&fiber.Cookie{Name: formCookie, Value: t, Path: "/", HTTPOnly: true,
		SameSite: fiber.CookieSameSiteStrictMode, Secure: c.Protocol() == "https"})
	return t
}

// safeNext keeps a redirect inside this site. It parses next as a URL and
// rebuilds it from its escaped path and re-encoded query, so what reaches
// the Location header is a path on this site and nothing else: no scheme
// or host, no control characters (CR and LF would split the header, a tab
// is dropped by browsers and "/\t/evil" turns into "//evil"), and no
// backslash that a browser would read as a slash.
func safeNext(next string) string {
	const home = "/threads"
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return home
	}
	path := u.EscapedPath()
	if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") {
		return home
	}
	if q := u.Query().Encode(); q != "" {
		path += "?" + q
	}
	return path
}
