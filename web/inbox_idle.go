package web

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// An answered parked call's connection waits for its client's next
// request without a goroutine (issue 31, item 3). Handed back to fasthttp
// at once (ServeConn), each of the ten thousand connections one ask
// answers started a goroutine that grew its stack and took a read buffer
// only to wait in a read — about a third of the servers' CPU in the wake,
// spent between one answer and the next. Now the connection is held by
// the process's epoll watcher (awaitRequest) until a byte of the next
// request is waiting, and only then served on, in a goroutine of its own;
// a client that goes away is closed there and then, one that stays silent
// past the idle timeout (Options.IdleTimeout, as fasthttp's) is closed by a
// timer, and the server's shutdown closes the rest. Where a connection
// cannot be watched (not Linux, not a socket), fasthttp serves it on at
// once, as before.
//
// Held connections count against the connection cap with the parked
// calls (park).
//
// Scaling: the connections held are this process's own, in memory as
// fasthttp's goroutines for them were.

// idleConns is the server's set of held connections, for its cap and its
// shutdown.
type idleConns struct {
	mu       sync.Mutex
	conns    map[*idleConn]bool
	stopping bool
}

// idleConn is one held connection. Its first end — the next request, the
// client gone, the idle timeout, the shutdown — takes it (taken); the
// others do nothing.
type idleConn struct {
	conn  net.Conn
	taken atomic.Bool

	mu      sync.Mutex
	stop    func()      // forgets the watch (set once registered)
	timer   *time.Timer // the idle timeout (set once registered)
	closing bool        // taken by the timer or the shutdown before stop was set
}

// holdIdle holds conn until its client's next request, which is then
// served in a goroutine of its own; false when conn cannot be held (the
// caller serves it on).
func (s *server) holdIdle(conn net.Conn) bool {
	x := s.idle
	ic := &idleConn{conn: conn}
	x.mu.Lock()
	if x.stopping {
		x.mu.Unlock()
		return false
	}
	if x.conns == nil {
		x.conns = map[*idleConn]bool{}
	}
	x.conns[ic] = true
	x.mu.Unlock()
	stop, ok := awaitRequest(conn, func() {
		if x.take(ic) {
			ic.stopTimer()
			go s.srv.ServeConn(conn)
		}
	}, func() {
		if x.take(ic) {
			ic.stopTimer()
			conn.Close()
		}
	})
	if !ok {
		x.take(ic)
		return false
	}
	ic.mu.Lock()
	ic.stop = stop
	closing := ic.closing
	if !closing && !ic.taken.Load() {
		ic.timer = time.AfterFunc(s.idleTimeout, func() { x.close(ic) })
	}
	ic.mu.Unlock()
	if closing {
		stop()
		conn.Close()
	}
	return true
}

// take takes ic for its first end, out of the set.
func (x *idleConns) take(ic *idleConn) bool {
	if !ic.taken.CompareAndSwap(false, true) {
		return false
	}
	x.mu.Lock()
	delete(x.conns, ic)
	x.mu.Unlock()
	return true
}

// close ends ic from its timer or the shutdown: the watch is forgotten
// before the connection is closed, so that the watcher never peeks at a
// descriptor closed (and perhaps reused).
func (x *idleConns) close(ic *idleConn) {
	if !x.take(ic) {
		return
	}
	ic.mu.Lock()
	stop := ic.stop
	ic.closing = stop == nil // holdIdle closes it once registered
	ic.mu.Unlock()
	if stop != nil {
		stop()
		ic.conn.Close()
	}
}

func (ic *idleConn) stopTimer() {
	ic.mu.Lock()
	t := ic.timer
	ic.mu.Unlock()
	if t != nil {
		t.Stop()
	}
}

// count is the connections held.
func (x *idleConns) count() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.conns)
}

// closeAll closes every held connection and holds no more.
func (x *idleConns) closeAll() {
	x.mu.Lock()
	x.stopping = true
	held := make([]*idleConn, 0, len(x.conns))
	for ic := range x.conns {
		held = append(held, ic)
	}
	x.mu.Unlock()
	for _, ic := range held {
		x.close(ic)
	}
}
