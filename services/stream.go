package services

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"parley/models"
)

// StreamItem is one item of an event stream (docs/protocol.md §13): an Event
// (Type StreamEvent), an InboxItem (StreamInbox), or, with Type "", a
// heartbeat. Cursor is the item's position in the stream, which a client
// passes back as since or Last-Event-ID to resume after it.
type StreamItem struct {
	Type   StreamItemType
	Cursor string
	Data   any
}

// StreamItemType is the Server-Sent Events type of a stream item.
type StreamItemType string

// The stream's item types (a heartbeat has none). StreamError is a
// stream's last item when it ends with a refusal (its Data a RefusalBody,
// its Cursor empty): the token was revoked while it ran.
const (
	StreamEvent StreamItemType = "parley.event"
	StreamInbox StreamItemType = "parley.inbox"
	StreamError StreamItemType = "parley.error"
)

// DefaultHeartbeat is how often a stream shows it is alive (§13: 15 s),
// and how often every long-lived call — a stream, a waiting read, a page's
// /live stream — checks that its caller still holds its token or session.
// A stream's row is refreshed apart from it, for all of a process's
// streams at once (stream_local.go).
const DefaultHeartbeat = 15 * time.Second

// Stream sends the caller every event after since and every turn that
// opened for it after since (the inbox without an extension), then
// whatever comes next, as it comes, until send fails or ctx ends. It holds
// no database connection while it waits. At most streams_per_token streams
// per token run at once, across every server process (else rate_limited).
// At each heartbeat its process re-checks the tokens of its long-lived
// calls in one query (store_revocations.go, issue 23): once the token is
// revoked, the stream's last item is a StreamError carrying
// token_invalid, and Stream returns that refusal.
// Once admitted it writes at once, after reading its first page: that
// page's items, or a heartbeat when there are none, so that the caller
// knows it runs (a stream with nothing to send sends the next heartbeat
// only after streamHeartbeat).
//
// The two feeds keep their own positions, and a stream cursor carries both
// (see streamCursor), so each is read only when there is news for it: the
// events whenever the log advances, at most every streamBatch; the inbox
// only when a turn may have opened for the caller (the hub's targeted
// wake-up, or the backstop's wake of everyone). A heartbeat reads nothing,
// so an idle stream costs the database nothing (issue 31). Items of one read go out in log order.
func (f *Forum) Stream(ctx context.Context, who Caller, since string, send func(StreamItem) error) error {
	if err := need(who, RightRead); err != nil {
		return err
	}
	at, err := decodeStreamCursor(since)
	if err != nil {
		return err
	}
	id, err := f.openStream(ctx, who)
	if err != nil {
		return err
	}
	ls := f.addLocalStream(id, holder{slotStream, who.TokenID})
	defer f.endLocalStream(ls)
	// The first write admits the stream (the transport starts its answer):
	// the first page's first item, or a heartbeat when there is none.
	started := false
	beat := time.NewTicker(f.heartbeat)
	defer beat.Stop()
	gone, stop := f.watchToken(who)
	defer stop()
	readInbox := true
	for {
		news, turns := f.hub.wait(), f.hub.waitTurn(who, false)
		held := false
		qctx, cancel := context.WithTimeout(context.WithValue(ctx, heldBackKey{}, &held), f.queryTimeout)
		items, next, err := f.streamPage(qctx, who, at, readInbox)
		cancel()
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := send(it); err != nil {
				return nil // the client went away
			}
			started = true
		}
		full := next != at
		at = next
		if full {
			continue // there may be more
		}
		if held {
			// Writes older than some it read are still running: read
			// again after the batch, news or not.
			time.Sleep(streamBatch)
			continue
		}
		if !started {
			if err := send(StreamItem{}); err != nil {
				return nil
			}
			started = true
		}
		readInbox = false
		if done, err := f.streamIdle(ctx, news, turns, gone, beat.C, ls.probe, send, &readInbox); done {
			return err
		}
		// Let a burst of writes come in: one read serves them all.
		select {
		case <-ctx.Done():
			return nil
		case <-turns:
			readInbox = true
		case reply := <-ls.probe:
			if !answerProbe(reply, send) {
				return nil
			}
		case <-time.After(streamBatch):
		}
	}
}

// streamIdle waits, reading nothing, until there is something to read:
// news of the log, or a turn that may be the caller's (readInbox). It
// sends the heartbeats and answers the probes meanwhile, so an idle stream
// costs the database nothing (issue 31). done when the stream ends: its
// client went away, ctx ended, or its token was revoked (err, after the
// stream's last item said so).
func (f *Forum) streamIdle(ctx context.Context, news, turns, gone <-chan struct{}, beat <-chan time.Time, probe chan chan error, send func(StreamItem) error, readInbox *bool) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return true, nil
		case <-news:
			return false, nil
		case <-turns:
			*readInbox = true
			return false, nil
		case <-gone:
			r := revokedRefusal()
			send(StreamItem{Type: StreamError, Data: RefusalBody{Error: r}})
			return true, r
		case <-beat:
			if err := send(StreamItem{}); err != nil {
				return true, nil
			}
		case reply := <-probe:
			if !answerProbe(reply, send) {
				return true, nil
			}
		}
	}
}

// answerProbe writes a heartbeat for a probe and answers its result; false
// when the write failed (the client went away).
func answerProbe(reply chan<- error, send func(StreamItem) error) bool {
	err := send(StreamItem{})
	reply <- err
	return err == nil
}

// streamBatch is the least time between two reads of a stream.
const streamBatch = 250 * time.Millisecond

// openStream records a new stream unless the token has streams_per_token
// counted already. At the limit, it first probes the token's streams this
// process serves (a heartbeat written now; a failed write or a closed
// connection releases the slot) and counts again.
//
// Reading: "makes sure each of the token's counted streams still has its
// client" — a local stream is probed now; a stream of another process
// counts while its owner refreshes it (every streamRefresh), and its owner
// watches its connection, so a closed one is released by its owner as
// quickly as a local one would be (see stream_local.go).
func (f *Forum) openStream(ctx context.Context, who Caller) (int64, error) {
	h := holder{slotStream, who.TokenID}
	limit := f.limits.StreamsPerToken
	if who.TokenID == 0 {
		limit = 0 // a signed-in page's caller: no token to count against
	}
	return f.openProbing(ctx, h, limit, func(n int) string {
		return fmt.Sprintf("this token has %d streams open, each with its client just now, the most it may (streams_per_token); close one first", n)
	})
}

// openProbing opens a slot of a kind its process refreshes (a stream, a
// /live stream) for h, at most limit of them: at the limit, it probes h's
// local streams (a heartbeat written now) and counts again if one of them
// ended. The refusal says why in the words of says, with the retry_after
// of streamRetryAfter.
func (f *Forum) openProbing(ctx context.Context, h holder, limit int, says func(n int) string) (int64, error) {
	refuse := func(counted []models.Stream, now time.Time) *Refusal {
		r := Refuse(RateLimited, "%s", says(len(counted)))
		r.RetryAfter = f.streamRetryAfter(h, counted, now)
		return r
	}
	id, err := f.openSlot(ctx, h, limit, nil, refuse)
	var r *Refusal
	if errors.As(err, &r) && r.Reason == RateLimited && f.probeLocalStreams(h) > 0 {
		id, err = f.openSlot(ctx, h, limit, nil, refuse)
	}
	return id, err
}

// streamPage reads what comes after a stream cursor: the events, and the
// inbox turns when readInbox, merged in log order. It answers the items and
// the cursor after them (at itself when there was nothing).
func (f *Forum) streamPage(ctx context.Context, who Caller, at streamCursor, readInbox bool) ([]StreamItem, streamCursor, error) {
	limit := f.limits.PageMax
	// One horizon for both feeds, so that what is sent is a cut of the log:
	// no turn goes out ahead of an earlier event held back (PostgreSQL) or
	// committed between the two reads (SQLite).
	h, err := f.horizon(ctx)
	if err != nil {
		return nil, at, err
	}
	ctx = context.WithValue(ctx, fixedHorizonKey{}, h)
	events, err := f.eventPage(ctx, 0, at.events, limit)
	if err != nil {
		return nil, at, err
	}
	var box []InboxItem
	var boxPos []int64
	if readInbox {
		if box, boxPos, err = f.inboxPositions(ctx, who, at.inbox, limit); err != nil {
			return nil, at, err
		}
	}
	var items []StreamItem
	i, j := 0, 0
	for i < len(events.Events) || j < len(boxPos) {
		if j >= len(boxPos) || i < len(events.Events) && events.Events[i].position <= boxPos[j] {
			at.events = events.Events[i].position
			items = append(items, StreamItem{Type: StreamEvent, Data: events.Events[i], Cursor: at.encode()})
			i++
		} else {
			at.inbox = boxPos[j]
			items = append(items, StreamItem{Type: StreamInbox, Data: box[j], Cursor: at.encode()})
			j++
		}
	}
	return items, at, nil
}

// inboxPositions is inboxPage with each item's log position.
func (f *Forum) inboxPositions(ctx context.Context, who Caller, since int64, limit int) ([]InboxItem, []int64, error) {
	page, err := f.inboxPage(ctx, who, "", since, limit, false)
	if err != nil {
		return nil, nil, err
	}
	pos := make([]int64, len(page.Items))
	for i, it := range page.Items {
		pos[i] = it.position
	}
	return page.Items, pos, nil
}

// streamCursor is where a stream stands in each of its feeds: the last
// event and the last inbox turn sent. It travels as "s2." and the base64 of
// "events.inbox"; a plain log cursor ("c1.…", from inbox or get_events) is
// accepted too, as both feeds at its position.
type streamCursor struct{ events, inbox int64 }

const streamCursorPrefix = "s2."

func (c streamCursor) encode() string {
	return streamCursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.events, 10)+"."+strconv.FormatInt(c.inbox, 10)))
}

func decodeStreamCursor(s string) (streamCursor, error) {
	if !strings.HasPrefix(s, streamCursorPrefix) {
		pos, err := decodeCursor(s, "since")
		return streamCursor{pos, pos}, err
	}
	bad := Refuse(InvalidBody, "since is not a cursor this server issued; pass back the last event id unchanged").On("since")
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, streamCursorPrefix))
	ev, box, ok := strings.Cut(string(raw), ".")
	if err != nil || !ok {
		return streamCursor{}, bad
	}
	e, err1 := strconv.ParseInt(ev, 10, 64)
	b, err2 := strconv.ParseInt(box, 10, 64)
	if err1 != nil || err2 != nil || e < 0 || b < 0 {
		return streamCursor{}, bad
	}
	return streamCursor{e, b}, nil
}

// CurrentCursor is a cursor at the log's current end: a client that passes
// it as since hears only what comes next. (The benchmark's listeners start
// there, as clients resuming a stream would.)
func (f *Forum) CurrentCursor(ctx context.Context) (string, error) {
	pos, err := lastPosition(f.db.WithContext(ctx))
	if err != nil {
		return "", err
	}
	return encodeCursor(pos), nil
}
