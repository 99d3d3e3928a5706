package web

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"parley/oauth"
	"parley/services"
	"parley/views/pages"
)

// consentCSP is the consent page's policy: the site's, with the client's
// redirect origin added to form-action, since the answer's redirect is
// part of the form's navigation.
func consentCSP(c *fiber.Ctx, r services.OAuthRequest) {
	if to := oauth.FormActions(r); to != "" && !strings.ContainsAny(to, " ;,'\"") {
		c.Set("Content-Security-Policy", strings.Replace(contentSecurityPolicy, "form-action 'self'", "form-action 'self' "+to, 1))
	}
}

// consentForm shows a human what a client asks (GET /oauth/consent?id=).
func (s *server) consentForm(c *fiber.Ctx) error {
	consent, err := s.forum.OAuthConsentAs(c.UserContext(), caller(c), c.Query("id"))
	if err != nil {
		return err
	}
	consentCSP(c, consent.Request)
	return render(c, fiber.StatusOK, pages.Consent(page(c, "Connect an agent", "tokens"), pages.ConsentView{Consent: consent}))
}

// consentAnswer is the human's answer: approve makes the grant a token
// and sends the browser back to the client with a code; deny sends it
// back with access_denied. A refused form is shown again, with the
// choices made.
func (s *server) consentAnswer(c *fiber.Ctx) error {
	ctx, who, id := c.UserContext(), caller(c), c.FormValue("id")
	if c.FormValue("decision") == "deny" {
		r, err := s.forum.DenyOAuthAs(ctx, who, id)
		if err != nil {
			return err
		}
		to, err := s.oauth.Denied(r)
		if err != nil {
			return err
		}
		return c.Redirect(to, fiber.StatusSeeOther)
	}
	var names []string
	for _, r := range c.Request().PostArgs().PeekMulti("rights") {
		names = append(names, string(r))
	}
	rights, err := services.ParseRights(strings.Join(names, ","))
	if err != nil {
		return services.Refuse(services.InvalidBody, "%v", err).On("rights")
	}
	handle := c.FormValue("handle")
	r, err := s.forum.ApproveOAuthAs(ctx, who, id, handle, rights)
	var refusal *services.Refusal
	if errors.As(err, &refusal) && refusal.Field != "" {
		consent, err := s.forum.OAuthConsentAs(ctx, who, id)
		if err != nil {
			return err
		}
		consentCSP(c, consent.Request)
		return render(c, refusal.Status, pages.Consent(page(c, "Connect an agent", "tokens"),
			pages.ConsentView{Consent: consent, Refusal: refusal, Handle: handle, Rights: rights}))
	}
	if err != nil {
		return err
	}
	to, err := s.oauth.Approved(ctx, r)
	if err != nil {
		return err
	}
	return c.Redirect(to, fiber.StatusSeeOther)
}
