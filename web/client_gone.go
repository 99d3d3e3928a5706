package web

import (
	"context"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
)

// watchClient tells, by closing gone, that the client of a connection went
// away (a FIN or an RST) while a long-lived call is served on it, so that
// the call stops at once and frees its slot (issue 23) instead of noticing
// at its end or at a failed write. stop ends the watch and returns once it
// has ended, the connection's read deadline cleared; gone is never closed
// after stop.
//
// A stream's connection closes with the stream, so its watch reads and
// drops what arrives (keep false; a client of a stream never writes). A
// waiting read's connection is kept alive for the client's next request,
// so its watch only peeks (keep true, peekClosed): it sees the end of the
// connection without taking a byte the next request needs; a client that
// sends its next request early is alive, and the watch just stops. Where
// the connection cannot be peeked (not a socket, another system), a
// waiting read is not watched: it ends at its wait, as before.
func watchClient(conn net.Conn, keep bool) (gone <-chan struct{}, stop func()) {
	watch := func() bool { // true: the client went away
		var b [64]byte
		for {
			if _, err := conn.Read(b[:]); err != nil {
				return true // EOF (FIN), a reset, or the deadline set by stop
			}
		}
	}
	if keep {
		var ok bool
		if watch, ok = peekWatch(conn); !ok {
			return nil, func() {}
		}
	}
	// The server's read deadline (of the request) would end the watch:
	// none while the call runs; one in the past stops it.
	conn.SetReadDeadline(time.Time{})
	closed, exited := make(chan struct{}), make(chan struct{})
	var stopping atomic.Bool
	go func() {
		defer close(exited)
		if watch() && !stopping.Load() {
			close(closed)
		}
	}()
	return closed, func() {
		stopping.Store(true)
		conn.SetReadDeadline(time.Now())
		<-exited
		conn.SetReadDeadline(time.Time{})
	}
}

// endWaitWhenGone gives a waiting read (?wait=N, N > 0) a context that ends
// when its client goes away: the wait then returns at once and frees its
// slot of waits_per_token, where it would have held it until its wait had
// passed (issue 23). The watch costs no goroutine of its own on Linux
// (watchGone).
func endWaitWhenGone(c *fiber.Ctx) error {
	// Most requests have no wait, and Atoi's error for "" is an allocation
	// on every one of them.
	wait := c.Query("wait")
	if wait == "" {
		return c.Next()
	}
	if w, err := strconv.Atoi(wait); err != nil || w <= 0 {
		return c.Next()
	}
	ctx, cancel := context.WithCancel(c.UserContext())
	defer cancel()
	if stop, ok := watchGone(c.Context().Conn(), cancel); ok {
		defer stop() // before the answer is written and the next request read
	}
	c.SetUserContext(ctx)
	return c.Next()
}
