package web

import (
	"bufio"
	"time"

	"github.com/gofiber/fiber/v2"
)

// streamWriteTimeout bounds writing one item of a stream; the stream as a
// whole has no write deadline (fasthttp's applies to whole answers).
const streamWriteTimeout = 10 * time.Second

// written is what an item of serveSSE implements to learn whether it
// reached the connection: it is called after the item's write and flush,
// with their error.
type written interface{ written(error) }

// serveSSE answers with Server-Sent Events: a comment line naming the
// stream, then each item from items as write renders it, until items
// closes, a write fails or the connection closes (the client went away),
// or the server shuts down; then it calls done.
//
// The connection closes with the stream (Connection: close): while it
// runs, serveSSE reads the connection, which a client of a stream never
// writes to, so that a FIN or an RST is seen at once rather than at the
// next write (docs/protocol.md §13, "a closed stream stops counting").
func serveSSE[T any](c *fiber.Ctx, name string, items <-chan T, done func(), write func(*bufio.Writer, T)) {
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("X-Accel-Buffering", "no")
	// The writer runs after the handler returns, when the request's
	// context may already be recycled: take the connection and the
	// server's shutdown signal now.
	fctx := c.Context()
	fctx.Response.SetConnectionClose()
	conn, shutdown := fctx.Conn(), fctx.Done()
	fctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer done()
		closed, stop := watchClient(conn, false)
		defer stop()
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
				err := w.Flush()
				if a, ok := any(it).(written); ok {
					a.written(err)
				}
				if err != nil {
					return
				}
			case <-closed:
				return
			case <-shutdown:
				return
			}
		}
	})
}
