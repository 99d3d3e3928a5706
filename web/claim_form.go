package web

import (
	"net/url"
	"slices"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/components"
)

// threadClaimForm answers a claim's Attest…, Refute… or Verify… button:
// the form, aimed at that claim and quoting it, to open in place under it
// (issue 29). Without htmx (a link followed by hand) it is the claim's
// page with the form open there.
func (s *server) threadClaimForm(c *fiber.Ctx) error {
	claim := c.Query("claim")
	if !isFragment(c) {
		claim = url.PathEscape(claim)
		return c.Redirect("/claims/"+claim+"?act="+string(knownAct(c.Query("act")))+"#act-"+claim, fiber.StatusSeeOther)
	}
	cl, err := s.forum.ClaimForPeople(c.UserContext(), caller(c), claim)
	if err != nil {
		return err
	}
	f := claimFormFor(c, cl, c.Query("act"))
	f.Standalone = c.Query("standalone") == "1"
	return render(c, fiber.StatusOK, components.ClaimFormView(f))
}

// claimFormFor is an empty form for an act on the claim, quoting its
// statement and status; an unknown act falls back to attest.
func claimFormFor(c *fiber.Ctx, cl services.Claim, act string) components.ClaimForm {
	f := components.ClaimForm{Thread: cl.Thread, Claim: cl.ID, Statement: cl.Statement, Status: cl.Status,
		Act: knownAct(act), EvidenceKind: "url", CSRF: csrfToken(c)}
	return f
}

// claimForm is the form a thread page's ?claim=&act= shows beside the
// tree (older links lead there): aimed at the claim, without its quote.
func claimForm(c *fiber.Ctx, thread string) components.ClaimForm {
	return components.ClaimForm{Thread: thread, Claim: c.Query("claim"), Act: knownAct(c.Query("act")), EvidenceKind: "url", CSRF: csrfToken(c)}
}

func knownAct(act string) services.Kind {
	if k := services.Kind(act); slices.Contains(components.ClaimActs, k) {
		return k
	}
	return services.Attest
}
