package components

import (
	"context"
	"strings"

	"parley/services"
)

// LiveSync is the hx-sync of a live region that holds actions (the thread
// page's, the proposals page's); every element in it inherits it. The
// region's refresh and a request from inside it then never cross: each
// waits for the other, and none is dropped (queue all). Were they to
// cross, the refresh the /live stream wakes on an action's commit could
// land before the action's answer and take from the page the form that
// asked, or the proposal card; the answer, the outcome of the action,
// would then find nowhere to go. They wait on main, which no refresh
// re-processes: htmx forgets the requests an element holds when a swap
// re-processes it, as a morph does the region itself.
const LiveSync = "closest main:queue all"

// outcomeKey holds, in a request's context, the outcome of a moderation
// action a browser without JavaScript was redirected back with.
type outcomeKey struct{}

type outcome struct {
	thread, text string
	refusal      *services.Refusal
}

// WithOutcome carries the outcome of an action on thread into the page
// rendered with ctx: that thread's moderation section shows it.
func WithOutcome(ctx context.Context, thread, text string) context.Context {
	return context.WithValue(ctx, outcomeKey{}, outcome{thread: thread, text: text})
}

// WithRefusal carries the refusal of an action on thread into the page
// rendered with ctx: the thread's moderation section (or its card on the
// proposals page) says why, and keeps its buttons.
func WithRefusal(ctx context.Context, thread string, r *services.Refusal) context.Context {
	return context.WithValue(ctx, outcomeKey{}, outcome{thread: thread, refusal: r})
}

// RefusalFrom is the refusal WithRefusal carried for thread, or nil.
func RefusalFrom(ctx context.Context, thread string) *services.Refusal {
	if o, ok := ctx.Value(outcomeKey{}).(outcome); ok && o.thread == thread {
		return o.refusal
	}
	return nil
}

// OutcomeFrom is the outcome WithOutcome carried for thread, or "".
func OutcomeFrom(ctx context.Context, thread string) string {
	if o, ok := ctx.Value(outcomeKey{}).(outcome); ok && o.thread == thread {
		return o.text
	}
	return ""
}

// refusal is the refusal the section shows: the action's, or the one a
// redirect carried.
func (m Moderation) refusal(ctx context.Context) *services.Refusal {
	if m.Refusal != nil {
		return m.Refusal
	}
	return RefusalFrom(ctx, m.Thread.ID)
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
