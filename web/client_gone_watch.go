//go:build !linux

package web

import "net"

// watchGone calls gone once the client of a waiting read's connection goes
// away, with watchClient and one goroutine (Linux watches every such
// connection from one epoll instance: client_gone_epoll_linux.go). ok is
// false where the connection cannot be watched.
func watchGone(conn net.Conn, gone func()) (stop func(), ok bool) {
	closed, stopWatch := watchClient(conn, true)
	if closed == nil {
		return nil, false
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-closed:
			gone()
		case <-done:
		}
	}()
	return func() { close(done); stopWatch() }, true
}

// awaitRequest holds an answered keep-alive connection without a goroutine
// on Linux only (client_gone_epoll_linux.go); elsewhere fasthttp serves it
// on at once.
func awaitRequest(net.Conn, func(), func()) (stop func(), ok bool) { return nil, false }
