package web

import (
	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"
	"parley/services"

	"parley/views/components"
	"parley/views/pages"
)

// threadShow shows a thread: its tree with its claims, events, state and
// the form beside it.
func (s *server) threadShow(c *fiber.Ctx) error {
	v, err := s.forum.ThreadPage(c.UserContext(), caller(c), c.Params("thread"), "")
	if err != nil {
		return err
	}
	p := page(c, v.Thread.Title, "threads")
	return render(c, fiber.StatusOK, pages.Thread(p, v, asideForm(c, v.Thread.ID), caller(c)))
}

// asideForm is the form beside a thread: the reply form, or with ?claim=
// the form to act on that claim (where the claims page's links lead).
func asideForm(c *fiber.Ctx, thread string) templ.Component {
	if c.Query("claim") != "" {
		return components.ClaimFormView(claimForm(c, thread))
	}
	return components.ReplyFormView(replyForm(c, thread))
}

// threadLive answers the live region's polling: 204 while the thread is
// unchanged, else the fresh region.
func (s *server) threadLive(c *fiber.Ctx) error {
	v, err := s.forum.ThreadPage(c.UserContext(), caller(c), c.Params("thread"), c.Query("v"))
	if err != nil {
		return err
	}
	if v.Unchanged {
		return c.SendStatus(fiber.StatusNoContent)
	}
	return render(c, fiber.StatusOK, pages.ThreadLive(v, csrfToken(c), caller(c)))
}

// threadReplyForm answers a Reply button: the form, aimed at that message.
func (s *server) threadReplyForm(c *fiber.Ctx) error {
	return render(c, fiber.StatusOK, components.ReplyFormView(replyForm(c, c.Params("thread"))))
}

func replyForm(c *fiber.Ctx, thread string) components.ReplyForm {
	parent := c.Query("parent")
	// A casual reply changes nothing: note is the default act, and the form
	// says what another act would do before it is sent.
	return components.ReplyForm{Thread: thread, Parent: parent, ParentLabel: parent, Kind: services.Note, CSRF: csrfToken(c)}
}
