package web

import (
	"slices"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/components"
	"parley/views/pages"
)

// threadShow shows a thread: its tree with its claims, events, state and
// the form beside it. Showing it is the human's visit: what others posted
// since their last one is marked new.
func (s *server) threadShow(c *fiber.Ctx) error {
	who := caller(c)
	v, err := s.forum.ThreadPage(c.UserContext(), who, c.Params("thread"), "")
	if err != nil {
		return err
	}
	seen, err := s.visit(c, v)
	if err != nil {
		return err
	}
	form := asideForm(c, v, components.ReplyForm{Parent: c.Query("parent"), Kind: services.Note})
	return s.threadPage(c, fiber.StatusOK, v, seen, form)
}

// threadPage renders the whole page.
func (s *server) threadPage(c *fiber.Ctx, status int, v services.ThreadPageView, seen string, form templ.Component) error {
	p := page(c, components.Headline(v.Thread.Title), "threads")
	return render(c, status, pages.Thread(p, pages.ThreadView{ThreadPageView: v, Viewer: caller(c), Seen: seen}, form))
}

// visit records that the human has seen the thread up to its newest
// message and returns the newest they had seen before ("" the first time).
func (s *server) visit(c *fiber.Ctx, v services.ThreadPageView) (string, error) {
	newest := components.Newest(v.Messages)
	if newest == "" {
		return "", nil
	}
	return s.forum.Visit(c.UserContext(), caller(c), v.Thread.ID, newest)
}

// asideForm is the form beside a thread: the reply form (f, completed
// here), or with ?claim= the form to act on that claim (where the claims
// page's links lead). A thread whose state of record takes no reply gets
// a word instead of the form; one that takes only a re-mark and a reopen
// offers those acts alone.
func asideForm(c *fiber.Ctx, v services.ThreadPageView, f components.ReplyForm) templ.Component {
	if c.Query("claim") != "" {
		return components.ClaimFormView(claimForm(c, v.Thread.ID))
	}
	who := caller(c)
	f.Thread, f.CSRF = v.Thread.ID, csrfToken(c)
	if f.Parent != "" {
		f.ParentLabel, f.Quote = f.Parent, components.Find(v.Messages, f.Parent)
	}
	if pages.CanReply(v.Thread, who) {
		return components.ReplyFormView(f)
	}
	f.Offer = services.Admitted(v.Thread, who, components.Kinds)
	if !slices.Contains(f.Offer, services.Mark) {
		return components.ClosedReply(v.Thread)
	}
	if !slices.Contains(f.Offer, f.Kind) {
		f.Kind = services.Mark
	}
	return components.ReplyFormView(f)
}

// threadLive answers the live region's polling: 204 while the thread is
// unchanged, else the fresh region. The page still shows the thread, so
// the visit moves on; what is marked new stays as at the page's load.
func (s *server) threadLive(c *fiber.Ctx) error {
	v, err := s.forum.ThreadPage(c.UserContext(), caller(c), c.Params("thread"), c.Query("v"))
	if err != nil {
		return err
	}
	if v.Unchanged {
		return c.SendStatus(fiber.StatusNoContent)
	}
	if _, err := s.visit(c, v); err != nil {
		return err
	}
	seen := c.Query("seen")
	if _, ok := services.ParseMessageRef(seen); !ok {
		seen = ""
	}
	view := pages.ThreadView{ThreadPageView: v, Viewer: caller(c), Seen: seen}
	return render(c, fiber.StatusOK, pages.ThreadLive(view, csrfToken(c)))
}

// threadReplyForm answers a message's Reply button: the form, opened in
// place under that message and quoting it. Without htmx (a link followed
// by hand) it is the thread page with the form beside the tree aimed at
// that message.
func (s *server) threadReplyForm(c *fiber.Ctx) error {
	thread, parent := c.Params("thread"), c.Query("parent")
	if !isFragment(c) {
		return c.Redirect("/threads/"+thread+"?parent="+parent+"#reply", fiber.StatusSeeOther)
	}
	view, err := s.forum.ReadThread(c.UserContext(), caller(c), services.ThreadQuery{Thread: thread})
	if err != nil {
		return err
	}
	quote := components.Find(view.Messages, parent)
	if quote == nil {
		return services.Refuse(services.MessageNotFound, "message %s is not in thread %s", parent, thread).On("parent")
	}
	// A casual reply changes nothing: note is the default act, and the form
	// says what another act would do before it is sent.
	return render(c, fiber.StatusOK, components.ReplyFormView(components.ReplyForm{
		Thread: view.Thread.ID, Parent: parent, ParentLabel: parent, Quote: quote, Inline: true, Kind: services.Note, CSRF: csrfToken(c),
	}))
}
