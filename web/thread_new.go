package web

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/pages"
)

// threadNewForm shows the form a human opens a thread with.
func (s *server) threadNewForm(c *fiber.Ctx) error {
	f, err := s.newThreadForm(c, pages.NewThreadForm{})
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, pages.ThreadNew(page(c, "New thread", "new"), f))
}

// threadCreate posts the form's ask and goes to the new thread; a refusal
// shows the form again with what was typed and why, in plain words.
//
// Reading: the protocol has no title: a thread's title is the first 80
// characters of its root's body. The form asks for the question in a line
// (at most 80 characters) and details apart; the body is the question, a
// blank line, then the details, so the title is the question.
//
// Reading: reply_by is a point in time; the form offers deadlines from
// now ("within 1 day"), which a phone enters in one tap and which need no
// time zone.
func (s *server) threadCreate(c *fiber.Ctx) error {
	f := pages.NewThreadForm{Title: c.FormValue("title"), Details: c.FormValue("details"), To: c.FormValue("to")}
	f.ReplyHours, _ = strconv.Atoi(c.FormValue("reply_within"))
	env := map[string]any{"kind": "ask", "body": newThreadBody(f)}
	if f.To != "" {
		env["to"] = map[string]string{"identity": f.To}
	}
	if f.ReplyHours > 0 {
		env["reply_by"] = time.Now().Add(time.Duration(f.ReplyHours) * time.Hour).UTC().Format(time.RFC3339)
	}
	raw, _ := json.Marshal(env)
	posted, err := s.forum.Post(c.UserContext(), caller(c), raw)
	var r *services.Refusal
	if errors.As(err, &r) {
		f.Refusal, f.Plain = r, plainNewThreadRefusal(r, s.forum.Limits())
		noteRefusal(c, r)
		retryAfter(c, r)
		if f, err = s.newThreadForm(c, f); err != nil {
			return err
		}
		return render(c, r.Status, pages.ThreadNew(page(c, "New thread", "new"), f))
	}
	if err != nil {
		return err
	}
	return redirect(c, "/threads/"+posted.Thread.ID)
}

// newThreadForm fills in the directory and the limits the form offers.
func (s *server) newThreadForm(c *fiber.Ctx, f pages.NewThreadForm) (pages.NewThreadForm, error) {
	dir, err := s.forum.ListIdentities(c.UserContext(), caller(c), services.IdentitiesQuery{Limit: strconv.Itoa(s.forum.Limits().PageMax)})
	if err != nil {
		return f, err
	}
	f.Identities, f.MaxHours = dir.Identities, s.forum.Limits().ReplyByMaxHours
	return f, nil
}

func newThreadBody(f pages.NewThreadForm) string {
	title, details := strings.TrimSpace(f.Title), strings.TrimSpace(f.Details)
	if details == "" {
		return title
	}
	return title + "\n\n" + details
}

// plainNewThreadRefusal says in plain words why the form was refused; the
// page shows the reason code and the service's message in small print.
func plainNewThreadRefusal(r *services.Refusal, l services.Limits) string {
	switch {
	case r.Reason == services.InvalidBody && r.Field == "body":
		return "The question needs a title, and question and details together may hold at most " + strconv.Itoa(l.BodyMaxChars) + " characters: shorten the details."
	case r.Reason == services.InvalidBody && r.Field == "reply_by":
		return "The deadline must lie in the future, and at most " + strconv.Itoa(l.ReplyByMaxHours) + " hours ahead."
	case r.Reason == services.IdentityNotFound || strings.HasPrefix(r.Field, "to"):
		return "Nobody by that name can be addressed here any more: choose another addressee, or anyone."
	case r.Reason == services.RateLimited:
		return "You are opening threads faster than this forum allows: wait a moment, then send again."
	}
	return "The thread could not be opened: " + r.Message
}
