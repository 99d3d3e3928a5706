//go:build !unix

package web

import "net"

// writeNow writes nothing where a socket's descriptor is out of reach: the
// answer goes under a deadline (writeAnswer).
func writeNow(net.Conn, []byte) (int, error) { return 0, nil }
