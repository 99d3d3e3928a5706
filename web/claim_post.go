package web

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/components"
	"parley/views/pages"
)

// threadClaimPost posts the claim form's attest, refute or verify as the
// signed-in human. With htmx the answer is the claim shown again where it
// was, the form become its status line (issue 29); a refusal comes back in
// the form, with what was typed. Without htmx the browser goes to the
// claim's page, which shows the same line, or the form with the refusal.
func (s *server) threadClaimPost(c *fiber.Ctx) error {
	form := components.ClaimForm{
		Thread: c.Params("thread"), Claim: c.FormValue("claim"), Act: services.Kind(c.FormValue("kind")),
		Body: c.FormValue("body"), EvidenceKind: services.EvidenceKind(c.FormValue("evidence_kind")),
		Ref: c.FormValue("evidence_ref"), Note: c.FormValue("evidence_note"), CSRF: csrfToken(c),
		Standalone: c.FormValue("standalone") == "1",
	}
	who := caller(c)
	posted, err := s.forum.Post(c.UserContext(), who, claimEnvelope(form))
	var r *services.Refusal
	if errors.As(err, &r) {
		form.Refusal = r
		noteRefusal(c, r)
		retryAfter(c, r)
		cl, err := s.forum.ClaimForPeople(c.UserContext(), who, form.Claim)
		if err != nil {
			// No claim to show the form under (claim_not_found, a mistyped
			// id): the form alone says why.
			return render(c, fiber.StatusOK, components.ClaimFormView(form))
		}
		form.Thread, form.Statement, form.Status = cl.Thread, cl.Statement, cl.Status
		if isFragment(c) {
			return render(c, fiber.StatusOK, components.ClaimView(s.claimCard(c, cl, form.Standalone, &form, nil)))
		}
		return render(c, fiber.StatusOK, pages.Claim(page(c, "Claim "+cl.ID, "claims"), s.claimCard(c, cl, true, &form, nil)))
	}
	if err != nil {
		return err
	}
	if !isFragment(c) {
		return c.Redirect("/claims/"+form.Claim+"?posted="+posted.Message.ID+"#act-"+form.Claim, fiber.StatusSeeOther)
	}
	cl, err := s.forum.ClaimForPeople(c.UserContext(), who, form.Claim)
	if err != nil {
		return err
	}
	c.Set("HX-Trigger", changedEvent)
	return render(c, fiber.StatusOK, components.ClaimView(s.claimCard(c, cl, form.Standalone, nil,
		&components.ClaimOutcome{Act: form.Act, Message: posted.Message.ID})))
}

// claimCard is a claim as the viewer sees it, its acts opening in place,
// with an open form or a status line under it.
func (s *server) claimCard(c *fiber.Ctx, cl services.Claim, standalone bool, form *components.ClaimForm, outcome *components.ClaimOutcome) components.ClaimCard {
	return components.ClaimCard{Claim: cl, Offers: cl.Offers(caller(c)), Standalone: standalone, InPlace: true, Form: form, Outcome: outcome}
}

// claimEnvelope turns the form into an envelope. A form whose pointer and
// note are both blank sends no evidence, so the services answer
// evidence_required; a note without a pointer is sent as it is, and
// refused as an opinion.
func claimEnvelope(f components.ClaimForm) []byte {
	env := map[string]any{"kind": f.Act, "thread": f.Thread, "claim": f.Claim, "body": f.Body}
	if strings.TrimSpace(f.Ref) != "" || strings.TrimSpace(f.Note) != "" {
		proof := map[string]any{"kind": f.EvidenceKind, "ref": f.Ref}
		if f.Note != "" {
			proof["note"] = f.Note
		}
		env["evidence"] = []any{proof}
	}
	raw, _ := json.Marshal(env)
	return raw
}
