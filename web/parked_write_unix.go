//go:build unix

package web

import (
	"errors"
	"net"
	"syscall"
)

// writeNow writes what of b the socket takes without waiting: one write
// system call on the non-blocking socket, with no deadline to arm. n < len(b)
// with a nil error: the rest must wait for room (writeAnswer).
func writeNow(conn net.Conn, b []byte) (int, error) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return 0, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, nil
	}
	var n int
	var werr error
	if err := rc.Write(func(fd uintptr) bool {
		for {
			n, werr = syscall.Write(int(fd), b)
			if !errors.Is(werr, syscall.EINTR) {
				return true
			}
		}
	}); err != nil {
		return 0, err
	}
	if errors.Is(werr, syscall.EAGAIN) || n < 0 {
		return 0, nil
	}
	return n, werr
}
