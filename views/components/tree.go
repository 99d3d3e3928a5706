package components

import (
	"strconv"
	"strings"

	"parley/services"
)

// isNew reports whether a message is new to the human reading: posted by
// someone else after the newest message they had seen.
func IsNew(m *services.Message, o TreeOptions) bool {
	if o.Seen == 0 || m.From.Identity == o.Viewer {
		return false
	}
	id, ok := services.ParseMessageRef(m.ID)
	return ok && id > o.Seen
}

// RepliesText labels a subtree's fold: "2 replies", or "2 replies, 9 in
// all" when deeper levels hold more.
func RepliesText(m *services.Message) string {
	direct, all := len(m.Replies), countAll(m.Replies)
	s := strconv.Itoa(direct) + " replies"
	if direct == 1 {
		s = "1 reply"
	}
	if all > direct {
		s += ", " + strconv.Itoa(all) + " in all"
	}
	return s
}

func countAll(ms []*services.Message) int {
	n := len(ms)
	for _, m := range ms {
		n += countAll(m.Replies)
	}
	return n
}

// FirstLine is a body's first non-empty line, for quoting it.
func FirstLine(body string) string {
	for _, line := range strings.Split(body, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

// Newest is the id of the newest message in a tree ("" for none): what a
// visit of the page has seen.
func Newest(ms []*services.Message) string {
	var best int64
	var walk func([]*services.Message)
	walk = func(ms []*services.Message) {
		for _, m := range ms {
			if id, ok := services.ParseMessageRef(m.ID); ok && id > best {
				best = id
			}
			walk(m.Replies)
		}
	}
	walk(ms)
	if best == 0 {
		return ""
	}
	return services.MessageKey(best)
}

// Find is the message with the id in a tree, or nil.
func Find(ms []*services.Message, id string) *services.Message {
	for _, m := range ms {
		if m.ID == id {
			return m
		}
		if f := Find(m.Replies, id); f != nil {
			return f
		}
	}
	return nil
}

// PlainRefusal says a refusal of the reply form in plain words; the stable
// reason and the service's own sentence follow in small print.
func PlainRefusal(r *services.Refusal, kind services.Kind) string {
	switch {
	case r.Reason == services.InvalidBody && r.Field == "state" && kind != services.Mark:
		return "Only a mark sets a state: choose mark, or send this " + string(kind) + " without a state."
	case r.Reason == services.InvalidBody && r.Field == "state":
		return "Choose the state this mark sets."
	case r.Reason == services.InvalidBody && r.Field == "body":
		return "Write a message of 1 to 500 characters."
	case r.Reason == services.ThreadLocked:
		return "This thread is closed: it takes no message until it is reopened. Your text is kept below."
	case r.Reason == services.ThreadEnded:
		return "This thread has ended: it takes only a reopen or a re-mark. Your text is kept below."
	case r.Reason == services.TransitionInvalid:
		return "The thread cannot move to that state from where it is now: choose another state, or another act."
	case r.Reason == services.SelfReply:
		return "That is your own message: reply to someone else's."
	}
	return "The message was not posted: " + r.Message
}

// RefusesText says what a thread whose state of record is closed or a side
// state still takes (docs/protocol.md §5, §5.2), or "" when it takes replies.
func RefusesText(th services.Thread) string {
	switch {
	case Locked(th):
		return "A closed thread accepts no message until it is reopened."
	case Ended(th):
		return "A thread that has ended accepts only a reopen (by a lock holder or a human) and a human's re-mark."
	}
	return ""
}

// bodyBelowTitle is what the root message shows under the page's h1: the
// h1 is its first line, so the body goes on from the second (ok true; ""
// when the root is that one line). A root whose first line the headline
// does not hold whole (one cut with "…") shows all of it (ok false).
func bodyBelowTitle(m, parent *services.Message, o TreeOptions) (string, bool) {
	if parent != nil || m.Parent != nil || o.Headline == "" {
		return "", false
	}
	body := strings.TrimSpace(m.Body)
	first, rest, _ := strings.Cut(body, "\n")
	if PlainText(strings.TrimSpace(first)) != o.Headline {
		return "", false
	}
	return strings.TrimSpace(rest), true
}
