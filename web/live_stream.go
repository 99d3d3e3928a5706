package web

import (
	"bufio"
	"context"
	"fmt"

	"github.com/gofiber/fiber/v2"
)

// liveStream answers GET /live for a signed-in page: Server-Sent Events
// named "changed" each time the forum's log advances, on which the page's
// live regions ask for themselves again (htmx's sse extension), and a
// comment line as heartbeat. It carries no data of the forum.
func (s *server) liveStream(c *fiber.Ctx) error {
	who := caller(c)
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
	// Changes' first item, a heartbeat, says it listens: the answer starts
	// only then, so that a page whose stream is open misses no change.
	<-changes
	serveSSE(c, "parley live", changes, cancel, func(w *bufio.Writer, pos int64) {
		if pos == 0 {
			w.WriteString(": heartbeat\n\n")
			return
		}
		fmt.Fprintf(w, "event: changed\ndata: %d\n\n", pos)
	})
	return nil
}
