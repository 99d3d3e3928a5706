package web

import (
	"errors"
	"log/slog"
	"net"
	"syscall"
	"time"
)

// Steady wraps a listener so that a transient accept error — the process
// out of file descriptors (EMFILE, ENFILE), the kernel out of buffers, a
// connection aborted before it was accepted — never stops the server, as it
// would in fasthttp, which treats every accept error as fatal. Accept backs
// off (5 ms, doubling, at most 1 s), logs, and tries again; connections that
// finish or time out free descriptors in the meantime.
func Steady(ln net.Listener, log *slog.Logger) net.Listener {
	return steadyListener{Listener: ln, log: log}
}

type steadyListener struct {
	net.Listener
	log *slog.Logger
}

const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

func (l steadyListener) Accept() (net.Conn, error) {
	delay := time.Duration(0)
	for {
		conn, err := l.Listener.Accept()
		if err == nil || !transientAccept(err) {
			return conn, err
		}
		delay = min(max(2*delay, acceptBackoffMin), acceptBackoffMax)
		l.log.Warn("accept failed; retrying", "err", err, "retry_in", delay)
		time.Sleep(delay)
	}
}

func transientAccept(err error) bool {
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.EINTR} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}
