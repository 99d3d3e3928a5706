package web

import (
	"encoding/json"
	"errors"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/components"
)

// threadPost posts the reply form's envelope as the signed-in human.
//
// After a post the person is taken back to the new message: htmx is told
// (parley:posted) which one to highlight once the tree has it, without
// moving the page; a browser without JavaScript is sent to its anchor.
// A refusal keeps what was typed: the form comes back with the body and
// the choices sent, the refusal in plain words above them.
func (s *server) threadPost(c *fiber.Ctx) error {
	thread := c.Params("thread")
	form := components.ReplyForm{
		Thread: thread, Parent: c.FormValue("parent"), ParentLabel: c.FormValue("parent"),
		Inline: c.FormValue("inline") == "1" && c.FormValue("parent") != "",
		Kind:   services.Kind(c.FormValue("kind")), State: services.State(c.FormValue("state")),
		Body: c.FormValue("body"), CSRF: csrfToken(c),
	}
	posted, err := s.forum.Post(c.UserContext(), caller(c), formEnvelope(form))
	var r *services.Refusal
	switch {
	case errors.As(err, &r):
		noteRefusal(c, r)
		return s.refusedReply(c, form, r)
	case err != nil:
		return err
	case !isFragment(c):
		return c.Redirect("/threads/"+posted.Thread.ID+"?posted="+url.QueryEscape(posted.Message.ID)+"#"+posted.Message.ID, fiber.StatusSeeOther)
	}
	trigger, _ := json.Marshal(map[string]any{changedEvent: true, "parley:posted": map[string]string{"id": posted.Message.ID}})
	c.Set("HX-Trigger", string(trigger))
	if form.Inline {
		// The form in place closes; the new message takes its place.
		return c.Status(fiber.StatusOK).SendString("")
	}
	fresh := components.ReplyForm{Thread: thread, Kind: services.Note, Posted: posted.Message.ID, CSRF: form.CSRF}
	if err := s.withPreviews(c, &fresh); err != nil {
		return err
	}
	if !fresh.Offers(services.Note) && !fresh.Offers(services.Mark) {
		// The act closed the thread: the form gives way to the word saying so.
		return render(c, fiber.StatusOK, components.ClosedReply(posted.Thread))
	}
	return render(c, fiber.StatusOK, components.ReplyFormView(fresh))
}

// refusedReply shows a refusal with the form as it was sent: in place for
// htmx (200, so that htmx swaps it in), or as the whole thread page for a
// browser without JavaScript (with the refusal's status).
func (s *server) refusedReply(c *fiber.Ctx, form components.ReplyForm, r *services.Refusal) error {
	form.Refusal = r
	retryAfter(c, r)
	v, err := s.forum.ThreadPage(c.UserContext(), caller(c), form.Thread, "")
	if err != nil {
		return err
	}
	if form.Parent != "" {
		form.Quote = components.Find(v.Messages, form.Parent)
	}
	if isFragment(c) {
		if err := s.withPreviews(c, &form); err != nil {
			return err
		}
		if !form.Inline && !form.Offers(services.Note) && !form.Offers(services.Mark) {
			return render(c, fiber.StatusOK, components.ClosedReply(v.Thread))
		}
		return render(c, fiber.StatusOK, components.ReplyFormView(form))
	}
	form.Inline = false
	aside, err := s.asideForm(c, v, form)
	if err != nil {
		return err
	}
	return s.threadPage(c, r.Status, v, "", aside)
}

// formEnvelope turns the form into an envelope. A state is sent whenever
// one was chosen: on an act other than mark the service refuses it
// (docs/protocol.md §3: state is for mark only) rather than the form dropping a
// choice the person made.
func formEnvelope(f components.ReplyForm) []byte {
	env := map[string]any{"kind": f.Kind, "thread": f.Thread, "body": f.Body}
	if f.Parent != "" {
		env["parent"] = f.Parent
	}
	if f.State != "" {
		env["state"] = f.State
	}
	raw, _ := json.Marshal(env)
	return raw
}
