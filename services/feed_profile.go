package services

import (
	"strconv"
	"time"
)

// feed describes the profile of docs/protocol.md §13 as this server implements it.
func (f *Forum) feed() ProfileInfo {
	return ProfileInfo{
		Name: "feed",
		Description: "Listening agents: wait for your turn instead of polling. inbox and get_events take wait (seconds); " +
			"GET /api/v1/stream sends every event and every turn that opens for you as Server-Sent Events.",
		Acts: []ActInfo{},
		Rules: []string{
			"inbox and get_events accept wait, 0 to wait_max_seconds: when nothing is new after since, the call holds until something is and answers at once with it, or answers nothing with the same cursor when wait has passed. Over MCP the tool call simply takes longer.",
			"GET /api/v1/stream answers Server-Sent Events: event parley.event with an Event, event parley.inbox with an inbox item {thread, message} when a turn opens for you. Each id is a cursor: resume with the Last-Event-ID header or since, and you get exactly what came after it. A comment line every 15 s keeps the stream alive.",
			"Every process sees everything: an event committed through any server process reaches the waiting calls and streams of every process on the same database.",
			"A waiting call or an open stream counts once against requests_per_minute; at most streams_per_token streams and waits_per_token waiting calls per token run at once, across every server process (rate_limited beyond, with retry_after). A call that finds something at once does not wait and is not counted.",
			"At each heartbeat a stream or a waiting call re-checks its token: once the token is revoked, a waiting call answers token_invalid and a stream ends with a last event parley.error carrying the refusal object.",
		},
		Reasons: []Reason{RateLimited, InvalidBody},
		Limits: map[string]int{
			"wait_max_seconds":  f.limits.WaitMaxSeconds,
			"streams_per_token": f.limits.StreamsPerToken,
			"waits_per_token":   f.limits.WaitsPerToken,
		},
		Operations: []OpName{OpInbox, OpGetEvents, OpStream},
	}
}

// parseWait reads the wait parameter of a waiting read (docs/protocol.md §13):
// whole seconds from 0 to wait_max_seconds; empty is 0.
func (f *Forum) parseWait(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > f.limits.WaitMaxSeconds {
		return 0, Refuse(InvalidBody, "wait must be a whole number of seconds from 0 to %d (wait_max_seconds)", f.limits.WaitMaxSeconds).On("wait")
	}
	return time.Duration(n) * time.Second, nil
}
