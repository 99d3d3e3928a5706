package web

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/components"
)

// threadClaimPost posts the claim form's attest, refute or verify as the
// signed-in human. A refusal comes back in the form, with what was typed;
// without htmx the browser returns to the claim in its thread.
func (s *server) threadClaimPost(c *fiber.Ctx) error {
	form := components.ClaimForm{
		Thread: c.Params("thread"), Claim: c.FormValue("claim"), Act: services.Kind(c.FormValue("kind")),
		Body: c.FormValue("body"), EvidenceKind: services.EvidenceKind(c.FormValue("evidence_kind")),
		Ref: c.FormValue("evidence_ref"), Note: c.FormValue("evidence_note"), CSRF: csrfToken(c),
	}
	posted, err := s.forum.Post(c.UserContext(), caller(c), claimEnvelope(form))
	var r *services.Refusal
	switch {
	case errors.As(err, &r) && isFragment(c):
		form.Refusal = r
		noteRefusal(c, r)
		retryAfter(c, r)
		return render(c, fiber.StatusOK, components.ClaimFormView(form))
	case err != nil:
		return err
	case !isFragment(c):
		return c.Redirect("/threads/"+posted.Thread.ID+"#"+form.Claim, fiber.StatusSeeOther)
	}
	c.Set("HX-Trigger", changedEvent)
	fresh := components.ClaimForm{Thread: form.Thread, Claim: form.Claim, Act: form.Act, EvidenceKind: form.EvidenceKind, Posted: posted.Message.ID, CSRF: form.CSRF}
	return render(c, fiber.StatusOK, components.ClaimFormView(fresh))
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
