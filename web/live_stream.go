package web

import (
	"bufio"
	"context"
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"parley/services"
)

// liveStream answers GET /live for a signed-in page: Server-Sent Events
// named "changed" each time the forum's log advances, on which the page's
// live regions ask for themselves again, and a comment line as heartbeat.
// It carries no data of the forum.
//
// It resolves the session itself rather than behind s.human, whose
// redirect to the sign-in page an EventSource cannot follow: for a session
// that is not (or no longer) signed in — at the start or at any heartbeat,
// services.Changes re-checks it — the stream's last event is "signed-out",
// on which the page shows its signed-out state and stops listening. Past
// the session's cap of /live streams the answer is the refusal,
// rate_limited.
func (s *server) liveStream(c *fiber.Ctx) error {
	ctx, cancel := context.WithCancel(context.Background())
	changes := make(chan liveItem)
	first := make(chan error, 1)
	go func() {
		defer close(changes)
		started := false
		err := s.forum.Changes(ctx, c.Cookies(sessionCookie), func(pos int64) error {
			if !started {
				started = true
				first <- nil
			}
			select {
			case changes <- liveItem{pos: pos}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if !started {
			first <- err
			return
		}
		if signedOut(err) {
			select {
			case changes <- liveItem{signedOut: true}:
			case <-ctx.Done():
			}
		}
	}()
	// Changes' first item, a heartbeat, says it listens: the answer starts
	// only then, so that a page whose stream is open misses no change.
	if err := <-first; err != nil {
		cancel()
		if !signedOut(err) {
			return err
		}
		ended := make(chan liveItem, 1)
		ended <- liveItem{signedOut: true}
		close(ended)
		serveSSE(c, "parley live", ended, func() {}, writeLive)
		return nil
	}
	<-changes // the first heartbeat: the stream's own first line says it
	serveSSE(c, "parley live", changes, cancel, writeLive)
	return nil
}

// liveItem is an item of /live: a log position (0: a heartbeat), or the
// session's end.
type liveItem struct {
	pos       int64
	signedOut bool
}

func writeLive(w *bufio.Writer, it liveItem) {
	switch {
	case it.signedOut:
		w.WriteString("event: signed-out\ndata: sign in again\n\n")
	case it.pos == 0:
		w.WriteString(": heartbeat\n\n")
	default:
		fmt.Fprintf(w, "event: changed\ndata: %d\n\n", it.pos)
	}
}

// signedOut reports whether a refusal of Changes means the page's session
// is not signed in.
func signedOut(err error) bool {
	var r *services.Refusal
	return errors.As(err, &r) && (r.Reason == services.TokenMissing || r.Reason == services.TokenInvalid)
}
