//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package web

import (
	"net"
	"syscall"
)

// peekWatch is the watch of a connection that must keep its bytes: it
// waits until the socket is readable and peeks (MSG_PEEK) at one byte,
// consuming nothing. It reports the client gone on an end of stream or a
// reset; a byte waiting (the client's next request) or a deadline (stop)
// ends the watch without. ok is false for a connection that is not a
// socket.
func peekWatch(conn net.Conn) (watch func() bool, ok bool) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, false
	}
	return func() bool {
		var b [1]byte
		var n int
		var perr error
		err := rc.Read(func(fd uintptr) bool {
			n, _, perr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			return perr != syscall.EAGAIN && perr != syscall.EINTR // else wait until readable
		})
		if err != nil {
			return false // stopped (the deadline), or the server closed it
		}
		return perr != nil || n == 0
	}, true
}
