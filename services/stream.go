package services

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"parley/models"
)

// StreamItem is one item of an event stream (PARLEY.md §13): an Event
// (Type "parley.event"), an InboxItem ("parley.inbox"), or, with Type "",
// a heartbeat. Cursor is the item's position in the stream, which a client
// passes back as since or Last-Event-ID to resume after it.
type StreamItem struct {
	Type   string
	Cursor string
	Data   any
}

// streamHeartbeat is how often a stream shows it is alive (§13: 15 s); it
// also refreshes the stream's row, which counts it in streams_per_token.
const streamHeartbeat = 15 * time.Second

// streamStale is how long a stream whose process died keeps counting.
const streamStale = time.Minute

// Stream sends the caller, in log order, every event after since and every
// turn that opened for it after since (the inbox without an extension),
// then whatever comes next, as it comes, until send fails or ctx ends. It
// holds no database connection while it waits. At most streams_per_token
// streams per token run at once, across every server process (else
// rate_limited).
//
// Stream positions: an event and the turn a write opens share a log
// position, so each item's cursor is the position times two, plus one for
// an inbox item, which comes after the event of the same write. Resuming
// from a cursor sends exactly what came after it.
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
	defer f.db.Delete(&models.Stream{}, id)
	beat := time.NewTicker(streamHeartbeat)
	defer beat.Stop()
	for {
		signal := f.hub.wait()
		qctx, cancel := context.WithTimeout(ctx, f.queryTimeout)
		items, next, err := f.streamPage(qctx, who, at)
		cancel()
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := send(it); err != nil {
				return nil // the client went away
			}
		}
		if next != at {
			at = next
			continue // there may be more
		}
		select {
		case <-ctx.Done():
			return nil
		case <-signal:
		case <-beat.C:
			if err := send(StreamItem{}); err != nil {
				return nil
			}
			f.db.Model(&models.Stream{}).Where("id = ?", id).Update("seen_at", f.timestamp())
		}
	}
}

// openStream counts the token's live streams under a lock on its token
// row, and records a new one unless there are streams_per_token already.
func (f *Forum) openStream(ctx context.Context, who Caller) (int64, error) {
	s := models.Stream{TokenID: who.TokenID, OpenedAt: f.timestamp(), SeenAt: f.timestamp()}
	err := f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if models.Dialect(tx) == "postgres" {
			if err := tx.Exec("SELECT id FROM tokens WHERE id = ? FOR UPDATE", who.TokenID).Error; err != nil {
				return err
			}
		}
		var open int64
		if err := tx.Model(&models.Stream{}).Where("token_id = ? AND seen_at > ?", who.TokenID, s.SeenAt.Add(-streamStale)).
			Count(&open).Error; err != nil {
			return err
		}
		if who.TokenID != 0 && int(open) >= f.limits.StreamsPerToken {
			r := Refuse(RateLimited, "this token has %d streams open, the most it may (streams_per_token); close one first", open)
			r.RetryAfter = int(streamHeartbeat.Seconds())
			return r
		}
		return tx.Create(&s).Error
	})
	if err != nil {
		return 0, fmt.Errorf("open stream: %w", err)
	}
	return s.ID, nil
}

// streamPage reads what comes after stream position at: events and inbox
// turns, merged in stream order. When a page is full, only items up to its
// last position are sent, so that the other kind is never skipped past.
func (f *Forum) streamPage(ctx context.Context, who Caller, at int64) ([]StreamItem, int64, error) {
	pos, inboxToo := at/2, at%2 == 0 // at = 2p: the inbox item of p is still to come
	limit := f.limits.PageMax
	events, err := f.eventPage(ctx, 0, pos, limit)
	if err != nil {
		return nil, at, err
	}
	inboxSince := pos
	if inboxToo {
		inboxSince = pos - 1
	}
	box, boxPos, err := f.inboxPositions(ctx, who, inboxSince, limit)
	if err != nil {
		return nil, at, err
	}
	evPos := make([]int64, len(events.Events))
	for i, e := range events.Events {
		evPos[i] = e.position
	}
	upTo := int64(1<<62 - 1)
	if len(evPos) == limit {
		upTo = min(upTo, 2*evPos[len(evPos)-1])
	}
	if len(boxPos) == limit {
		upTo = min(upTo, 2*boxPos[len(boxPos)-1]+1)
	}
	var items []StreamItem
	i, j := 0, 0
	for i < len(evPos) || j < len(boxPos) {
		var it StreamItem
		var sp int64
		if j >= len(boxPos) || i < len(evPos) && 2*evPos[i] < 2*boxPos[j]+1 {
			sp, it = 2*evPos[i], StreamItem{Type: "parley.event", Data: events.Events[i]}
			i++
		} else {
			sp, it = 2*boxPos[j]+1, StreamItem{Type: "parley.inbox", Data: box[j]}
			j++
		}
		if sp <= at || sp > upTo {
			continue
		}
		it.Cursor = encodeStreamCursor(sp)
		items = append(items, it)
		at = sp
	}
	return items, at, nil
}

// inboxPositions is inboxPage with each item's log position.
func (f *Forum) inboxPositions(ctx context.Context, who Caller, since int64, limit int) ([]InboxItem, []int64, error) {
	page, err := f.inboxPage(ctx, who, "", since, limit)
	if err != nil {
		return nil, nil, err
	}
	pos := make([]int64, len(page.Items))
	for i, it := range page.Items {
		pos[i] = it.position
	}
	return page.Items, pos, nil
}

// Stream cursors are "s1." and the base64 of the stream position; a plain
// log cursor ("c1.…", from inbox or get_events) is accepted too, as the
// position after everything at its log position.
const streamCursorPrefix = "s1."

func encodeStreamCursor(sp int64) string {
	return streamCursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(sp, 10)))
}

func decodeStreamCursor(s string) (int64, error) {
	if !strings.HasPrefix(s, streamCursorPrefix) {
		pos, err := decodeCursor(s, "since")
		if err != nil || s == "" {
			return 2 * pos, err
		}
		return 2*pos + 1, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, streamCursorPrefix))
	sp, perr := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || perr != nil || sp < 0 {
		return 0, Refuse(InvalidBody, "since is not a cursor this server issued; pass back the last event id unchanged").On("since")
	}
	return sp, nil
}
