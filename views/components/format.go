// Package components holds the parts of pages that htmx swaps in place or
// that appear on more than one page. A swap target owns its id, and the same
// component renders it in the full page and in the fragment.
package components

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"parley/services"
)

// When formats a time for people; the <time> element keeps the exact value.
func When(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// Machine formats a time for the datetime attribute.
func Machine(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Awaiting says whose turn it is, for people.
func Awaiting(a *services.Awaiting) string {
	switch {
	case a == nil:
		return "nobody"
	case a.Identity == "*" && a.Extension == nil:
		return "anyone"
	case a.Extension != nil:
		return a.Identity + " · " + *a.Extension
	}
	return a.Identity
}

// Ext shows an optional extension.
func Ext(e *string) string {
	if e == nil {
		return ""
	}
	return *e
}

// Short keeps the number of a key: "th_12" → "12".
func Short(key string) string {
	_, n, _ := strings.Cut(key, "_")
	return n
}

// States are the seven states, in the manifest's order.
var States = []services.State{"open", "answered", "decided", "closed", "deferred", "obsolete", "rejected"}

// Kinds are the acts the reply form offers: the nine, in the manifest's
// order, and assert. The other dialectic acts name a claim and carry
// evidence: a claim's own form posts them.
var Kinds = func() []services.Kind {
	out := make([]services.Kind, 0, len(services.Acts)+1)
	for _, a := range services.Acts {
		out = append(out, a.Kind)
	}
	return append(out, services.Assert)
}()

// KindHelp is an act's one-line description.
func KindHelp(k services.Kind) string {
	for _, a := range slices.Concat(services.Acts, services.ProfileActs) {
		if a.Kind == k {
			return a.Description
		}
	}
	return ""
}

// KindEffect says, before it is sent, what an act does to the thread: the
// mark it carries and whom it awaits (docs/protocol.md §4), from the manifest's
// table, so the form and the protocol cannot disagree.
func KindEffect(k services.Kind) string {
	for _, a := range slices.Concat(services.Acts, services.ProfileActs) {
		if a.Kind == k {
			return string(k) + " — state: " + a.Mark + "; then awaits " + a.Awaiting + "."
		}
	}
	return ""
}

// RecordText says what a thread's state of record is and who gave it, as
// in "decided · confirmed by human:ada" or "decided · proposed by
// ainotes:alice, confirmed by KI · Steward". A model's thread starts
// "open · opened by <model>": its first open needs no confirmation.
func RecordText(th services.Thread) string {
	rec := string(th.StateOfRecord)
	switch {
	case th.RecordConfirmedBy != th.RecordSetBy:
		return rec + " · proposed by " + th.RecordSetBy + ", confirmed by " + th.RecordConfirmedBy
	case th.RecordOrigin == "llm" && !strings.HasPrefix(th.RecordSetBy, "KI · "):
		return rec + " · opened by " + th.RecordSetBy
	}
	return rec + " · confirmed by " + th.RecordConfirmedBy
}

// ProposalText says what is pending on top of the state of record, or ""
// when nothing is: "proposed: rejected by ainotes:alice".
func ProposalText(th services.Thread) string {
	if th.Confirmed {
		return ""
	}
	return "proposed: " + string(th.State) + " by " + th.StateLabel
}

// Locked reports whether the thread's state of record is closed: it takes
// nothing but reopen (and a mark of closed that turns a reopen down).
func Locked(th services.Thread) bool { return th.StateOfRecord == "closed" }

// Ended reports whether the state of record is closed or a side state.
func Ended(th services.Thread) bool { return services.Terminal(th.StateOfRecord) }

// Paused reports whether the guard holds models back in the thread.
func Paused(th services.Thread) bool { return th.Guard == services.GuardPaused }

// Ago says how long before now t was, as people say it: "just now",
// "5 min ago", "3 h ago", "yesterday", "4 days ago", then the date. A time
// ahead of now (a reply_by deadline) reads "in 5 min".
func Ago(t, now time.Time) string {
	d := now.Sub(t)
	ahead := d < 0
	if ahead {
		d = -d
	}
	var s string
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		s = strconv.Itoa(int(d/time.Minute)) + " min"
	case d < 24*time.Hour:
		s = strconv.Itoa(int(d/time.Hour)) + " h"
	case d < 48*time.Hour && !ahead:
		return "yesterday"
	case d < 48*time.Hour:
		s = "1 day"
	case d < 14*24*time.Hour:
		s = strconv.Itoa(int(d/(24*time.Hour))) + " days"
	default:
		return t.UTC().Format("2 Jan 2006")
	}
	if ahead {
		return "in " + s
	}
	return s + " ago"
}

// Cut shortens text to at most n characters, on a word boundary, ending
// in "…" when it cut anything. Titles in lists use it; the thread page
// shows the whole title.
func Cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := string(r[:n])
	if i := strings.LastIndexAny(cut, " \t\n"); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " \t\n.,;:") + "…"
}

// Headline is a thread's title as pages show it. The protocol makes the
// title the root message cut to 80 characters (docs/protocol.md §8.1), which can
// run from a first line into the next, or end mid-word. A page shows the
// first line; a one-line title that long is cut on a word, with "…". (A
// root of exactly 80 characters gets the "…" too: the title alone cannot
// tell it was not cut, and the message itself is on the page.)
//
// It is plain text: Markdown in the first line shows as the words it
// renders to (PlainText), never as raw `**`, backticks or "[…](…)".
func Headline(title string) string {
	if first, _, ok := strings.Cut(strings.TrimSpace(title), "\n"); ok {
		return PlainText(strings.TrimSpace(first))
	}
	plain := PlainText(title)
	if utf8.RuneCountInString(title) < 80 {
		return plain
	}
	// The title was cut: its last word may be cut too, so the headline
	// ends on a word boundary before it, with "…".
	return Cut(plain, min(79, utf8.RuneCountInString(plain)-1))
}

// Count says how many of a thing there are: "1 message", "3 messages".
func Count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// DueText says when an answer is due, as people say it: "due in 40 min",
// or "overdue by 5 min" once the time has passed.
func DueText(due, now time.Time, late bool) string {
	if due.After(now) && !late {
		return "due " + Ago(due, now)
	}
	if ago := Ago(due, now); strings.HasSuffix(ago, " ago") {
		if !due.After(now) {
			return "overdue by " + strings.TrimSuffix(ago, " ago")
		}
	}
	return "overdue"
}

func replyWord(n int) string {
	if n == 1 {
		return "reply"
	}
	return "replies"
}

// EffectText says in one sentence what an act will do here, from the
// services' preview: "Marks the thread answered and gives the turn to
// ainotes:coder."
func EffectText(p services.ActPreview) string {
	if p.Kind == services.Mark {
		return "Sets the state you choose below; then nobody is awaited (after open: anyone)."
	}
	var mark string
	switch p.Outcome {
	case services.OutcomeSets:
		mark = "marks the thread " + string(p.To)
	case services.OutcomeProposes:
		mark = "proposes " + string(p.To) + ", pending until a human or a lock holder confirms it"
	case services.OutcomeConfirms:
		mark = "confirms the proposed " + string(p.To)
	case services.OutcomeWithdraw:
		mark = "withdraws the pending proposal, back to " + string(p.To)
	}
	var turn string
	switch a := p.Awaiting; {
	case p.Carries && a != nil:
		turn = "leaves the turn with " + Awaiting(a)
	case p.Carries:
		turn = "leaves the turn as it is"
	case a == nil:
		turn = "awaits nobody after it"
	case a.Identity == services.Anyone:
		turn = "opens the turn to anyone"
	default:
		turn = "gives the turn to " + Awaiting(a)
	}
	s := turn
	if mark != "" {
		s = mark + " and " + turn
	} else if p.Carries {
		s = "changes nothing and " + turn
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}
