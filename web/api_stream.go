package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"parley/services"
)

// stream answers GET /api/v1/stream (docs/protocol.md §13) with Server-Sent
// Events: "parley.event" and "parley.inbox", each with its cursor as id,
// and a comment line as heartbeat. It resumes after Last-Event-ID, else
// after since. It ends when the client goes away or the server shuts down,
// or, once the token was revoked, with a last event "parley.error" whose
// data is the refusal object (token_invalid) and no id, so that a client
// resuming with Last-Event-ID loses nothing.
func (s *server) stream(c *fiber.Ctx) error {
	since := c.Get("Last-Event-ID")
	if since == "" {
		since = c.Query("since")
	}
	who := caller(c)
	// The stream is admitted before the answer starts, so that a refusal
	// (too many streams, a bad cursor) is an ordinary refusal; Stream's first
	// write (an item, or a heartbeat) says it was admitted. Each send waits until its item is
	// written and flushed, so that the service learns of a client gone at
	// the write that found it (a probe, docs/protocol.md §13).
	first := make(chan error, 1)
	items := make(chan streamWrite)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(items)
		started := false
		err := s.forum.Stream(ctx, who, since, func(it services.StreamItem) error {
			if !started {
				started = true
				first <- nil
			}
			ack := make(chan error, 1)
			select {
			case items <- streamWrite{it, ack}:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case err := <-ack:
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if !started {
			first <- err
		}
	}()
	if err := <-first; err != nil {
		cancel()
		return err
	}
	serveSSE(c, "parley stream", items, cancel, writeSSE)
	return nil
}

// streamWrite is an item on its way to the connection, and where to say
// whether it got there.
type streamWrite struct {
	it  services.StreamItem
	ack chan error
}

func (w streamWrite) written(err error) { w.ack <- err }

func writeSSE(w *bufio.Writer, sw streamWrite) {
	it := sw.it
	if it.Type == "" {
		w.WriteString(": heartbeat\n\n")
		return
	}
	data, _ := json.Marshal(it.Data) // shapes of services, which always encode
	if it.Cursor == "" {
		// An error has no position; an empty id would reset the client's
		// last event id.
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", it.Type, data)
		return
	}
	fmt.Fprintf(w, "event: %s\nid: %s\ndata: %s\n\n", it.Type, it.Cursor, data)
}
