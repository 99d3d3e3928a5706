package web

import (
	"bufio"
	"context"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
)

// liveStream answers GET /live for a signed-in page: Server-Sent Events
// named "changed" each time the forum's log advances, on which the page's
// live regions ask for themselves again (htmx's sse extension), and a
// comment line as heartbeat. It carries no data of the forum.
func (s *server) liveStream(c *fiber.Ctx) error {
	who, fctx := caller(c), c.Context()
	ctx, cancel := context.WithCancel(context.Background())
	changes := make(chan int64)
	go func() {
		defer close(changes)
		s.forum.Changes(ctx, who, func(pos int64) error {
			select {
			case changes <- pos:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("X-Accel-Buffering", "no")
	// The writer runs after the handler returns, when the request's
	// context may already be recycled: take the connection and the
	// server's shutdown signal now.
	conn, shutdown := fctx.Conn(), fctx.Done()
	fctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer cancel()
		w.WriteString(": parley live\n\n")
		if w.Flush() != nil {
			return
		}
		for {
			select {
			case pos, ok := <-changes:
				if !ok {
					return
				}
				conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
				if pos == 0 {
					w.WriteString(": heartbeat\n\n")
				} else {
					fmt.Fprintf(w, "event: changed\ndata: %d\n\n", pos)
				}
				if w.Flush() != nil {
					return
				}
			case <-shutdown:
				return
			}
		}
	})
	return nil
}
