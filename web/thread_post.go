package web

import (
	"encoding/json"
	"errors"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/components"
)

// threadPost posts the reply form's envelope as the signed-in human.
func (s *server) threadPost(c *fiber.Ctx) error {
	thread := c.Params("thread")
	form := components.ReplyForm{
		Thread: thread, Parent: c.FormValue("parent"), ParentLabel: c.FormValue("parent"),
		Kind: services.Kind(c.FormValue("kind")), State: services.State(c.FormValue("state")),
		Body: c.FormValue("body"), CSRF: csrfToken(c),
	}
	posted, err := s.forum.Post(c.UserContext(), caller(c), formEnvelope(form))
	var r *services.Refusal
	switch {
	case errors.As(err, &r) && isFragment(c):
		form.Refusal = r
		return render(c, fiber.StatusOK, components.ReplyFormView(form))
	case err != nil:
		return err
	case !isFragment(c):
		return c.Redirect("/threads/"+posted.Thread.ID+"#"+posted.Message.ID, fiber.StatusSeeOther)
	}
	c.Set("HX-Trigger", changedEvent)
	fresh := components.ReplyForm{Thread: thread, Kind: form.Kind, Posted: posted.Message.ID, CSRF: form.CSRF}
	return render(c, fiber.StatusOK, components.ReplyFormView(fresh))
}

// formEnvelope turns the form into an envelope. The state select only
// means something for mark; for other acts it is left out.
func formEnvelope(f components.ReplyForm) []byte {
	env := map[string]any{"kind": f.Kind, "thread": f.Thread, "body": f.Body}
	if f.Parent != "" {
		env["parent"] = f.Parent
	}
	if f.Kind == "mark" {
		env["state"] = f.State
	}
	raw, _ := json.Marshal(env)
	return raw
}
