package components

import (
	"context"
	"strings"

	"parley/services"
)

// outcomeKey holds, in a request's context, the outcome of a moderation
// action a browser without JavaScript was redirected back with.
type outcomeKey struct{}

type outcome struct{ thread, text string }

// WithOutcome carries the outcome of an action on thread into the page
// rendered with ctx: that thread's moderation section shows it.
func WithOutcome(ctx context.Context, thread, text string) context.Context {
	return context.WithValue(ctx, outcomeKey{}, outcome{thread, text})
}

// OutcomeFrom is the outcome WithOutcome carried for thread, or "".
func OutcomeFrom(ctx context.Context, thread string) string {
	if o, ok := ctx.Value(outcomeKey{}).(outcome); ok && o.thread == thread {
		return o.text
	}
	return ""
}

// FirstLines is the start of a body as a card quotes it: at most lines
// non-empty lines and n characters, cut on a word with "…".
func FirstLines(body string, lines, n int) string {
	var kept []string
	for _, l := range strings.Split(body, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			kept = append(kept, l)
		}
	}
	cut := len(kept) > lines
	if cut {
		kept = kept[:lines]
	}
	s := Cut(strings.Join(kept, "\n"), n)
	if cut && !strings.HasSuffix(s, "…") {
		s += " …"
	}
	return s
}

// ParentLead says how a proposing act relates to the message it replies
// to: a decide accepts an answer, an answer answers a question.
func ParentLead(act, parent *services.Message) string {
	switch {
	case act.Kind == services.Decide && parent.Kind == services.Answer:
		return "Accepts the answer by"
	case act.Kind == services.Decide:
		return "Decides on the " + string(parent.Kind) + " by"
	case act.Kind == services.Answer:
		return "Answers the " + string(parent.Kind) + " by"
	}
	return "Replies to the " + string(parent.Kind) + " by"
}

// done is the outcome the section shows: the action's answer, or the one a
// redirect carried.
func (m Moderation) done(ctx context.Context) string {
	if m.Done != "" {
		return m.Done
	}
	return OutcomeFrom(ctx, m.Thread.ID)
}
