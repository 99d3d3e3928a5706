package web

import (
	"bufio"
	"time"

	"github.com/gofiber/fiber/v2"
)

// streamWriteTimeout bounds writing one item of a stream; the stream as a
// whole has no write deadline (fasthttp's applies to whole answers).
const streamWriteTimeout = 10 * time.Second

// serveSSE answers with Server-Sent Events: a comment line naming the
// stream, then each item from items as write renders it, until items
// closes, a write fails (the client went away) or the server shuts down;
// then it calls done.
func serveSSE[T any](c *fiber.Ctx, name string, items <-chan T, done func(), write func(*bufio.Writer, T)) {
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("X-Accel-Buffering", "no")
	// The writer runs after the handler returns, when the request's
	// context may already be recycled: take the connection and the
	// server's shutdown signal now.
	fctx := c.Context()
	conn, shutdown := fctx.Conn(), fctx.Done()
	fctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer done()
		w.WriteString(": " + name + "\n\n")
		if w.Flush() != nil {
			return
		}
		for {
			select {
			case it, ok := <-items:
				if !ok {
					return
				}
				conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
				write(w, it)
				if w.Flush() != nil {
					return
				}
			case <-shutdown:
				return
			}
		}
	})
}
