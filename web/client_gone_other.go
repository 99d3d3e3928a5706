//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package web

import "net"

// peekWatch cannot peek here: waiting reads are not watched (see
// watchClient).
func peekWatch(net.Conn) (func() bool, bool) { return nil, false }
