package services

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
)

// Opaque key prefixes (docs/protocol.md §8.1).
const (
	threadPrefix  = "th_"
	messagePrefix = "msg_"
	eventPrefix   = "ev_"
	claimPrefix   = "cl_"
)

// ThreadKey formats a thread id as "th_N".
func ThreadKey(id int64) string { return threadPrefix + strconv.FormatInt(id, 10) }

// MessageKey formats a message id as "msg_N".
func MessageKey(id int64) string { return messagePrefix + strconv.FormatInt(id, 10) }

// EventKey formats an event id as "ev_N".
func EventKey(id int64) string { return eventPrefix + strconv.FormatInt(id, 10) }

// ClaimKey formats a claim id as "cl_N".
func ClaimKey(id int64) string { return claimPrefix + strconv.FormatInt(id, 10) }

// ParseThreadRef reads "th_N", "N" or a JSON number into a thread id.
func ParseThreadRef(s string) (int64, bool) { return parseRef(s, threadPrefix) }

// threadRef reads a thread reference sent as text, or refuses it.
func threadRef(s string) (int64, error) {
	id, ok := ParseThreadRef(s)
	if !ok {
		return 0, badThreadRef("thread")
	}
	return id, nil
}

// threadRefs is threadRef for each of refs, in order.
func threadRefs(refs []string) ([]int64, error) {
	ids := make([]int64, 0, len(refs))
	for _, s := range refs {
		id, err := threadRef(s)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func badThreadRef(field string) *Refusal {
	return Refuse(InvalidBody, `thread must be "th_N" or a positive number`).On(field)
}

func threadNotFound(id int64) *Refusal {
	return Refuse(ThreadNotFound, "thread %s does not exist", ThreadKey(id)).On("thread")
}

// ParseClaimRef reads "cl_N", "N" or a JSON number into a claim id.
func ParseClaimRef(s string) (int64, bool) { return parseRef(s, claimPrefix) }

// claimRef reads a claim reference sent as text, or refuses it.
func claimRef(s, field string) (int64, error) {
	id, ok := ParseClaimRef(s)
	if !ok {
		return 0, badClaimRef(field)
	}
	return id, nil
}

func badClaimRef(field string) *Refusal {
	return Refuse(InvalidBody, `%s must be "cl_N" or a positive number`, field).On(field)
}

func claimNotFound(id int64, field string) *Refusal {
	return Refuse(ClaimNotFound, "claim %s does not exist", ClaimKey(id)).On(field)
}

// ParseMessageRef reads "msg_N", "N" or a JSON number into a message id.
func ParseMessageRef(s string) (int64, bool) { return parseRef(s, messagePrefix) }

func parseRef(s, prefix string) (int64, bool) {
	s = strings.TrimPrefix(s, prefix)
	if s == "" || s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0
}

// refFromJSON reads a reference sent as a string or a number.
func refFromJSON(raw json.RawMessage, prefix string) (int64, bool) {
	var s string
	if err := stringInto(raw, &s); err != nil {
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return 0, false
		}
		s = n.String()
	}
	return parseRef(s, prefix)
}

// Cursors are opaque to clients: "c1." followed by the base64 of a log
// position. The version prefix lets the encoding change later.
const cursorPrefix = "c1."

// The addressed inbox's cursors (docs/protocol.md §8, errata 2) are "a1."
// and the base64 of a log position: the same positions, told apart so that
// neither view of the inbox takes the other's.
const addressedCursorPrefix = "a1."

func encodeCursor(pos int64) string {
	return cursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(pos, 10)))
}

// encodeInboxCursor is encodeCursor for one view of the inbox.
func encodeInboxCursor(pos int64, addressed bool) string {
	if addressed {
		return addressedCursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(pos, 10)))
	}
	return encodeCursor(pos)
}

// decodeCursor reads a cursor; "" is the beginning (position 0). An
// addressed inbox's cursor is refused, saying so: only that view takes it.
func decodeCursor(s, field string) (int64, error) {
	if strings.HasPrefix(s, addressedCursorPrefix) {
		return 0, Refuse(InvalidBody, "%s is a cursor of the addressed inbox (inbox with addressed=true), which only that view takes; pass a cursor this read returned, or none to start over", field).On(field)
	}
	return decodePosition(s, cursorPrefix, field)
}

// decodeInboxCursor reads the since of one view of the inbox; the other
// view's cursor is invalid_body, naming the view it belongs to.
func decodeInboxCursor(s string, addressed bool) (int64, error) {
	const field = "since"
	switch {
	case !addressed && strings.HasPrefix(s, addressedCursorPrefix):
		return 0, Refuse(InvalidBody, "since is a cursor of the addressed inbox: pass it with addressed=true, or read the full inbox from the start without since (each view has its own cursor)").On(field)
	case addressed && strings.HasPrefix(s, cursorPrefix):
		return 0, Refuse(InvalidBody, "since is a cursor of the full inbox (or of events): with addressed=true pass a cursor an addressed inbox returned, or none to start from the beginning (each view has its own cursor)").On(field)
	case addressed:
		return decodePosition(s, addressedCursorPrefix, field)
	}
	return decodeCursor(s, field)
}

func decodePosition(s, prefix, field string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, prefix))
	pos, perr := strconv.ParseInt(string(raw), 10, 64)
	if !strings.HasPrefix(s, prefix) || err != nil || perr != nil || pos < 0 {
		return 0, Refuse(InvalidBody, "%s is not a cursor this server issued; pass back the cursor string unchanged", field).On(field)
	}
	return pos, nil
}
