package web

import (
	"encoding/json"
	"errors"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/components"
	"parley/views/pages"
)

// A moderation action is one service call on a thread's state (or, to
// resume a thread the guard paused, a human's note), made by a human from
// the thread page or the proposals page. says words its outcome from the
// form's fields, so that the redirect of a browser without JavaScript can
// carry the action instead of the text.
type moderation struct {
	do        func(s *server, c *fiber.Ctx, thread string, f modForm) (services.Thread, error)
	says      func(f modForm) string
	withState bool // the form names a state (and says speaks of it)
}

// modForm is what a moderation form sends besides the CSRF token.
type modForm struct {
	State    string // the state to confirm, re-mark or keep
	Proposal string // withdraw: the proposal turned down
}

var moderations = map[string]moderation{
	"confirm": {
		withState: true,
		do: func(s *server, c *fiber.Ctx, thread string, f modForm) (services.Thread, error) {
			body, _ := json.Marshal(map[string]string{"state": f.State})
			out, err := s.forum.Confirm(c.UserContext(), caller(c), thread, body)
			return out.Thread, err
		},
		says: func(f modForm) string { return "Confirmed " + f.State + "." },
	},
	"remark": {
		withState: true,
		do: func(s *server, c *fiber.Ctx, thread string, f modForm) (services.Thread, error) {
			return s.mark(c, thread, "mark", f.State, "Re-marked as "+f.State+".")
		},
		says: func(f modForm) string { return "Re-marked as " + f.State + "." },
	},
	"withdraw": {
		withState: true,
		// A mark naming the state of record withdraws the pending proposal
		// (docs/protocol.md §5.2 rule 3).
		do: func(s *server, c *fiber.Ctx, thread string, f modForm) (services.Thread, error) {
			return s.mark(c, thread, "mark", f.State, withdrawText(f))
		},
		says: withdrawText,
	},
	"close": {
		do: func(s *server, c *fiber.Ctx, thread string, _ modForm) (services.Thread, error) {
			return s.mark(c, thread, "mark", "closed", "Closed and locked.")
		},
		says: func(modForm) string { return "Closed and locked." },
	},
	"reopen": {
		do: func(s *server, c *fiber.Ctx, thread string, _ modForm) (services.Thread, error) {
			return s.mark(c, thread, "reopen", "", "Reopened.")
		},
		says: func(modForm) string { return "Reopened." },
	},
	"resume": {
		// Any message of a human resumes a thread the guard paused
		// (docs/protocol.md §14 rule 3); a note carries the turn forward, so the
		// models pick up where they stopped.
		do: func(s *server, c *fiber.Ctx, thread string, _ modForm) (services.Thread, error) {
			return s.mark(c, thread, "note", "", resumeText)
		},
		says: func(modForm) string { return resumeText },
	},
}

const resumeText = "Resumed by a human: carry on, and bring it to a decision."

func withdrawText(f modForm) string {
	return "Turned down the proposal " + f.Proposal + ": the thread stays " + f.State + "."
}

// readModForm reads the form's fields; from a redirect's query (the
// outcome shown after it) only valid states are taken, so that no text
// chosen by a link reaches the page.
func readModForm(get func(key string, def ...string) string, strict bool) modForm {
	f := modForm{State: get("state"), Proposal: get("proposal")}
	if strict {
		if !services.ValidState(services.State(f.State)) {
			f.State = ""
		}
		if !services.ValidState(services.State(f.Proposal)) {
			f.Proposal = ""
		}
	}
	return f
}

func (s *server) mark(c *fiber.Ctx, thread, kind, state, body string) (services.Thread, error) {
	env := map[string]any{"kind": kind, "thread": thread, "body": body}
	if state != "" {
		env["state"] = state
	}
	raw, _ := json.Marshal(env)
	out, err := s.forum.Post(c.UserContext(), caller(c), raw)
	return out.Thread, err
}

// moderate answers a moderation form where the person acted (issue 15,
// item 4). With htmx, on the proposals page the answer replaces the card
// with a one-line outcome; on the thread page it replaces the moderation
// section with the outcome on top, and the live region refreshes itself
// around it. Without JavaScript it redirects back to the acted-on item's
// anchor, where the outcome shows.
func (s *server) moderate(fromProposals bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		name := c.Params("action")
		act, ok := moderations[name]
		if !ok {
			return fiber.ErrNotFound
		}
		thread := c.Params("thread")
		form := readModForm(c.FormValue, false)
		th, err := act.do(s, c, thread, form)
		var r *services.Refusal
		if err != nil && !errors.As(err, &r) {
			return err
		}
		noteRefusal(c, r)
		retryAfter(c, r)
		if !isFragment(c) {
			q := doneQuery(name, form)
			if r != nil {
				// Back to the item, which keeps its buttons and says why.
				q = url.Values{"refused": {string(r.Reason)}}
			}
			return c.Redirect(outcomeURL(fromProposals, thread, q), fiber.StatusSeeOther)
		}
		// The navigation's count of proposals refreshes at once; the
		// thread page's live region too.
		c.Set("HX-Trigger", changedEvent)
		switch {
		case r != nil && fromProposals:
			// Keep the card; show the reason in its result area.
			c.Set("HX-Retarget", "#result-"+thread)
			return render(c, fiber.StatusOK, components.Outcome("result-"+thread, "", r))
		case fromProposals:
			return render(c, fiber.StatusOK, components.SettledProposal(th, act.says(form)))
		}
		if r != nil {
			// A refusal changed nothing: the section keeps its buttons and
			// says why on its first line.
			c.Set("HX-Retarget", "#"+components.OutcomeSlotID(thread))
			c.Set("HX-Reswap", "outerHTML")
			return render(c, fiber.StatusOK, components.ModerationOutcome(thread, "", r))
		}
		// Whatever element a form named (the guard notice's resume names
		// the aside), the answer replaces the moderation section.
		c.Set("HX-Retarget", "#"+components.SectionID(thread))
		c.Set("HX-Reswap", "outerHTML")
		m := components.Moderation{Thread: th, Base: "/threads/" + thread, CSRF: csrfToken(c), Done: act.says(form)}
		return render(c, fiber.StatusOK, components.ModerationView(m))
	}
}

// outcomeURL is where a browser without JavaScript returns after an
// action: the acted-on item's anchor, with the outcome in the query (see
// doneQuery) so the page can say there what was done, or why not.
func outcomeURL(fromProposals bool, thread string, q url.Values) string {
	if fromProposals {
		q.Set("thread", thread)
		return "/proposals?" + q.Encode() + "#" + components.ProposalID(thread)
	}
	return "/threads/" + url.PathEscape(thread) + "?" + q.Encode() + "#" + components.SectionID(thread)
}

// doneQuery names an action that was done, and its states: the page words
// the outcome itself (outcomeOf), so a link cannot make it say anything.
func doneQuery(action string, f modForm) url.Values {
	q := url.Values{"done": {action}}
	if f.State != "" {
		q.Set("state", f.State)
	}
	if f.Proposal != "" {
		q.Set("proposal", f.Proposal)
	}
	return q
}

// refusedOf reads the refusal a redirect carried: only a known reason,
// said in the page's own words (components.Plain); nil otherwise.
func refusedOf(c *fiber.Ctx) *services.Refusal {
	reason := services.Reason(c.Query("refused"))
	if !services.KnownReason(reason) {
		return nil
	}
	return services.Refuse(reason, "nothing was changed")
}

// outcomeOf reads the outcome a redirect carried (see outcomeURL), or "".
func outcomeOf(c *fiber.Ctx) string {
	act, ok := moderations[c.Query("done")]
	if !ok {
		return ""
	}
	f := readModForm(c.Query, true)
	if act.withState && (f.State == "" || (c.Query("done") == "withdraw" && f.Proposal == "")) {
		return ""
	}
	return act.says(f)
}

// threadOutcome lets the thread page show the outcome a redirect carried
// in its moderation section (components.OutcomeFrom). It runs before the
// thread page's own handler and changes nothing else.
func (s *server) threadOutcome(c *fiber.Ctx) error {
	id, ok := services.ParseThreadRef(c.Params("thread"))
	switch done, refused := outcomeOf(c), refusedOf(c); {
	case !ok:
	case done != "":
		c.SetUserContext(components.WithOutcome(c.UserContext(), services.ThreadKey(id), done))
	case refused != nil:
		c.SetUserContext(components.WithRefusal(c.UserContext(), services.ThreadKey(id), refused))
	}
	return c.Next()
}

// settledOf is the proposals page's outcome line after a redirect.
func settledOf(c *fiber.Ctx) pages.Settled {
	done := outcomeOf(c)
	id, ok := services.ParseThreadRef(c.Query("thread"))
	if !ok || done == "" {
		return pages.Settled{}
	}
	return pages.Settled{Thread: services.ThreadKey(id), Done: done}
}
