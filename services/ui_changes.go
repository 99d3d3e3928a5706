package services

import (
	"context"
	"time"
)

// Changes tells a signed-in page that the forum changed (docs/protocol.md §13:
// the web UI updates from the stream instead of polling): send gets the
// highest announced log position each time it rises, and 0 as a
// heartbeat: at once, when Changes listens (so that a caller that waits
// for it before it answers misses no later advance), then every
// streamHeartbeat. It reads nothing from the database; the page asks for
// what it shows, with its version. It returns when send fails or ctx
// ends.
func (f *Forum) Changes(ctx context.Context, who Caller, send func(pos int64) error) error {
	if err := need(who, RightRead); err != nil {
		return err
	}
	beat := time.NewTicker(streamHeartbeat)
	defer beat.Stop()
	last := f.hub.position()
	if err := send(0); err != nil {
		return nil
	}
	for {
		signal := f.hub.wait()
		if pos := f.hub.position(); pos > last {
			last = pos
			if err := send(pos); err != nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-signal:
		case <-beat.C:
			if err := send(0); err != nil {
				return nil
			}
		}
	}
}
