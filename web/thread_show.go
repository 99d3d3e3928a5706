package web

import (
	"errors"

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
	form, err := s.asideForm(c, v, components.ReplyForm{Parent: c.Query("parent"), Kind: services.Note})
	if err != nil {
		return err
	}
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
// page's links lead). The form offers the acts the services preview as
// admitted here (withPreviews); a thread that takes neither a reply nor a
// mark (closed) gets a word instead of the form.
func (s *server) asideForm(c *fiber.Ctx, v services.ThreadPageView, f components.ReplyForm) (templ.Component, error) {
	if c.Query("claim") != "" {
		return components.ClaimFormView(claimForm(c, v.Thread.ID)), nil
	}
	f.Thread, f.CSRF = v.Thread.ID, csrfToken(c)
	if f.Parent != "" {
		f.ParentLabel, f.Quote = f.Parent, components.Find(v.Messages, f.Parent)
	}
	if err := s.withPreviews(c, &f); err != nil {
		return nil, err
	}
	return asideLive(v.Thread, f), nil
}

// asideLive is the reply form, or the closed panel when the thread takes
// neither a reply nor a mark, in the region that follows the thread.
func asideLive(th services.Thread, f components.ReplyForm) templ.Component {
	if !f.Offers(services.Note) && !f.Offers(services.Mark) {
		return components.AsideLive(th.ID, components.PreviewVersion(f, true), components.ClosedReply(th))
	}
	return components.AsideLive(th.ID, components.PreviewVersion(f, false), components.ReplyFormView(f))
}

// threadAside answers the aside's live region: 204 while the form offers
// what it did (v), else the form again, with what was typed in it (sent
// by hx-include), offering what the thread now admits.
func (s *server) threadAside(c *fiber.Ctx) error {
	v, err := s.forum.ThreadPage(c.UserContext(), caller(c), c.Params("thread"), "")
	if err != nil {
		return err
	}
	f := components.ReplyForm{
		Thread: v.Thread.ID, Parent: c.Query("parent"), Kind: services.Kind(c.Query("kind")),
		State: services.State(c.Query("state")), Body: c.Query("body"), CSRF: csrfToken(c),
	}
	if f.Kind == "" {
		f.Kind = services.Note
	}
	if f.Parent != "" {
		f.ParentLabel, f.Quote = f.Parent, components.Find(v.Messages, f.Parent)
	}
	if err := s.withPreviews(c, &f); err != nil {
		return err
	}
	closed := !f.Offers(services.Note) && !f.Offers(services.Mark)
	if components.PreviewVersion(f, closed) == c.Query("v") {
		return c.SendStatus(fiber.StatusNoContent)
	}
	return render(c, fiber.StatusOK, asideLive(v.Thread, f))
}

// withPreviews asks the services which acts the form may offer under its
// parent, and what each would do; the chosen act stays when offered, else
// falls to note, else to the first offered.
func (s *server) withPreviews(c *fiber.Ctx, f *components.ReplyForm) error {
	prev, err := s.forum.PreviewActs(c.UserContext(), caller(c), f.Thread, f.Parent, components.Kinds)
	var r *services.Refusal
	if errors.As(err, &r) && f.Parent != "" && r.Reason == services.MessageNotFound {
		// A ?parent= that names no message of the thread: the root's form.
		f.Parent, f.ParentLabel, f.Quote = "", "", nil
		prev, err = s.forum.PreviewActs(c.UserContext(), caller(c), f.Thread, "", components.Kinds)
	}
	if err != nil {
		return err
	}
	f.Previews = prev
	switch {
	case f.Offers(f.Kind):
	case f.Offers(services.Note):
		f.Kind = services.Note
	case len(prev) > 0:
		f.Kind = prev[0].Kind
	}
	return nil
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
	form := components.ReplyForm{
		Thread: view.Thread.ID, Parent: parent, ParentLabel: parent, Quote: quote, Inline: true, Kind: services.Note, CSRF: csrfToken(c),
	}
	if err := s.withPreviews(c, &form); err != nil {
		return err
	}
	return render(c, fiber.StatusOK, components.ReplyFormView(form))
}
