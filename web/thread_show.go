package web

import (
	"github.com/gofiber/fiber/v2"

	"parley/views/components"
	"parley/views/pages"
)

// threadShow shows a thread: its tree, events, state and the reply form.
func (s *server) threadShow(c *fiber.Ctx) error {
	v, err := s.forum.ThreadPage(c.UserContext(), caller(c), c.Params("thread"), "")
	if err != nil {
		return err
	}
	p := page(c, v.Thread.Title, "threads")
	return render(c, fiber.StatusOK, pages.Thread(p, v, replyForm(c, v.Thread.ID)))
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
	return render(c, fiber.StatusOK, pages.ThreadLive(v, csrfToken(c)))
}

// threadReplyForm answers a Reply button: the form, aimed at that message.
func (s *server) threadReplyForm(c *fiber.Ctx) error {
	return render(c, fiber.StatusOK, components.ReplyFormView(replyForm(c, c.Params("thread"))))
}

func replyForm(c *fiber.Ctx, thread string) components.ReplyForm {
	parent := c.Query("parent")
	return components.ReplyForm{Thread: thread, Parent: parent, ParentLabel: parent, Kind: "answer", CSRF: csrfToken(c)}
}
