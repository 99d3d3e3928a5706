package web

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/components"
)

// A moderation action is one service call on a thread's state (or, to
// resume a thread the guard paused, a human's note), made by a human from
// the thread page or the proposals page.
type moderation func(s *server, c *fiber.Ctx, thread string) (services.Thread, string, error)

var moderations = map[string]moderation{
	"confirm": func(s *server, c *fiber.Ctx, thread string) (services.Thread, string, error) {
		state := c.FormValue("state")
		body, _ := json.Marshal(map[string]string{"state": state})
		out, err := s.forum.Confirm(c.UserContext(), caller(c), thread, body)
		return out.Thread, "Confirmed " + state + ".", err
	},
	"remark": func(s *server, c *fiber.Ctx, thread string) (services.Thread, string, error) {
		state := c.FormValue("state")
		return s.mark(c, thread, "mark", state, fmt.Sprintf("Re-marked as %s.", state))
	},
	"withdraw": func(s *server, c *fiber.Ctx, thread string) (services.Thread, string, error) {
		// A mark naming the state of record withdraws the pending proposal
		// (PARLEY.md §5.2 rule 3).
		state := c.FormValue("state")
		return s.mark(c, thread, "mark", state, fmt.Sprintf("Turned down the proposal %s: the thread stays %s.", c.FormValue("proposal"), state))
	},
	"close": func(s *server, c *fiber.Ctx, thread string) (services.Thread, string, error) {
		return s.mark(c, thread, "mark", "closed", "Closed and locked.")
	},
	"reopen": func(s *server, c *fiber.Ctx, thread string) (services.Thread, string, error) {
		return s.mark(c, thread, "reopen", "", "Reopened.")
	},
	"resume": func(s *server, c *fiber.Ctx, thread string) (services.Thread, string, error) {
		// Any message of a human resumes a thread the guard paused
		// (PARLEY.md §14 rule 3); a note carries the turn forward, so the
		// models pick up where they stopped.
		return s.mark(c, thread, "note", "", "Resumed by a human: carry on, and bring it to a decision.")
	},
}

func (s *server) mark(c *fiber.Ctx, thread, kind, state, body string) (services.Thread, string, error) {
	env := map[string]any{"kind": kind, "thread": thread, "body": body}
	if state != "" {
		env["state"] = state
	}
	raw, _ := json.Marshal(env)
	out, err := s.forum.Post(c.UserContext(), caller(c), raw)
	return out.Thread, body, err
}

// moderate answers a moderation form. On the proposals page the answer
// replaces the proposal's row; on the thread page it is a short outcome, and
// the live region refreshes itself. A refusal is shown in place.
func (s *server) moderate(fromProposals bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		act, ok := moderations[c.Params("action")]
		if !ok {
			return fiber.ErrNotFound
		}
		thread := c.Params("thread")
		th, done, err := act(s, c, thread)
		var r *services.Refusal
		if err != nil && !errors.As(err, &r) {
			return err
		}
		if !isFragment(c) {
			if r != nil {
				return r
			}
			back := "/threads/" + thread
			if fromProposals {
				back = "/proposals"
			}
			return c.Redirect(back, fiber.StatusSeeOther)
		}
		switch {
		case r != nil && fromProposals:
			// Keep the row; show the reason in its result area.
			c.Set("HX-Retarget", "#result-"+thread)
			return render(c, fiber.StatusOK, components.Outcome("result-"+thread, "", r))
		case r != nil:
			return render(c, fiber.StatusOK, components.Outcome("moderation-result", "", r))
		case fromProposals:
			return render(c, fiber.StatusOK, components.ProposalRow(th, done, csrfToken(c)))
		}
		c.Set("HX-Trigger", changedEvent)
		return render(c, fiber.StatusOK, components.Outcome("moderation-result", done, nil))
	}
}
