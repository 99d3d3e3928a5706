package web

import (
	"slices"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/components"
)

// threadClaimForm answers a claim's Attest…, Refute… or Verify… button: the
// form, aimed at that claim, in the reply form's place.
func (s *server) threadClaimForm(c *fiber.Ctx) error {
	return render(c, fiber.StatusOK, components.ClaimFormView(claimForm(c, c.Params("thread"))))
}

// claimForm is an empty form for the claim and act named in the query;
// an unknown act falls back to attest.
func claimForm(c *fiber.Ctx, thread string) components.ClaimForm {
	act := services.Kind(c.Query("act"))
	if !slices.Contains(components.ClaimActs, act) {
		act = services.Attest
	}
	return components.ClaimForm{Thread: thread, Claim: c.Query("claim"), Act: act, EvidenceKind: "url", CSRF: csrfToken(c)}
}
