package web

import (
	"github.com/gofiber/fiber/v2"

	"parley/views/components"
	"parley/views/pages"
)

// claimShow is a claim's own page (a claim reference, the claims page's
// links): the claim with its quorum, evidence and acts, linked to its
// thread. With ?act= the form for that act is open under it (the acts'
// buttons without JavaScript); with ?posted= the claim shows what the
// viewer's act just did.
func (s *server) claimShow(c *fiber.Ctx) error {
	cl, err := s.forum.ClaimForPeople(c.UserContext(), caller(c), c.Params("claim"))
	if err != nil {
		return err
	}
	card := s.claimCard(c, cl, true, nil, components.OutcomeOf(cl, c.Query("posted")))
	if act := c.Query("act"); act != "" {
		f := claimFormFor(c, cl, act)
		f.Standalone = true
		card.Form, card.Outcome = &f, nil
	}
	return render(c, fiber.StatusOK, pages.Claim(page(c, "Claim "+cl.ID, "claims"), card))
}
