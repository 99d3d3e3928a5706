package web

import (
	"crypto/subtle"
	"errors"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/layout"
)

const (
	sessionCookie = "parley_session"
	// formCookie carries the double-submit CSRF token of the forms used
	// before a session exists (sign-in, setup).
	formCookie = "parley_form"
	csrfKey    = "parley.csrf"
)

// human admits a signed-in human: it resolves the session cookie and, for
// every request that changes something, checks the CSRF token that forms
// send as _csrf and htmx as X-CSRF-Token. Reading: a failed check is
// token_invalid, the stable reason for a credential that does not hold.
func (s *server) human(c *fiber.Ctx) error {
	sess, err := s.forum.SessionCaller(c.UserContext(), c.Cookies(sessionCookie))
	var r *services.Refusal
	if errors.As(err, &r) && (r.Reason == services.TokenMissing || r.Reason == services.TokenInvalid) {
		return redirect(c, "/signin?next="+url.QueryEscape(c.OriginalURL()))
	}
	if err != nil {
		return err
	}
	if c.Method() != fiber.MethodGet && c.Method() != fiber.MethodHead && !sameToken(csrfOf(c), sess.CSRF) {
		return services.Refuse(services.TokenInvalid, "this form is out of date (CSRF check failed); reload the page and try again")
	}
	c.Locals(callerKey, sess.Caller)
	c.Locals(csrfKey, sess.CSRF)
	// A signed-in page shows what this human may see: no cache keeps it,
	// and the back button after sign-out shows nothing of it.
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Next()
}

func csrfOf(c *fiber.Ctx) string {
	if h := c.Get("X-CSRF-Token"); h != "" {
		return h
	}
	return c.FormValue("_csrf")
}

func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// page is the frame of a signed-in page.
func page(c *fiber.Ctx, title, active string) layout.Page {
	return layout.Page{Title: title, Identity: caller(c).Identity, CSRF: csrfToken(c), Active: active}
}

// csrfToken is the signed-in session's CSRF token, for forms in fragments.
func csrfToken(c *fiber.Ctx) string {
	csrf, _ := c.Locals(csrfKey).(string)
	return csrf
}

// setSession stores the session cookie: HttpOnly, SameSite=Lax, and Secure
// when the request came over TLS.
func setSession(c *fiber.Ctx, token string) {
	c.Cookie(&fiber.Cookie{
		Name: sessionCookie, Value: token, Path: "/", HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode,
		Secure: c.Protocol() == "https", MaxAge: int(services.SessionLifetime.Seconds()),
	})
}
