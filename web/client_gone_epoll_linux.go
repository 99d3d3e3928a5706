//go:build linux

package web

import (
	"net"
	"os"
	"sync"
	"syscall"
)

// watchGone calls gone once the client of a waiting read's connection goes
// away (a FIN or an RST), as watchClient tells it, but without a goroutine
// per call: the process has one epoll instance for every such connection
// and one goroutine reading it (issue 31: ten thousand waiting calls held
// three goroutines each). The connection is registered one-shot for
// readability and peer shutdown; when it fires, a peek (MSG_PEEK, consuming
// nothing) tells an end of stream or a reset (gone) from the client's next
// request arriving early (alive: the watch just stops, as watchClient's
// does). stop returns once gone can no longer be called. ok is false where
// the connection is not a socket: then the call is not watched and ends at
// its wait, as before.
//
// stop makes no system call: one ask ends thousands of waits at once, and
// an epoll_ctl each to deregister them was a tenth of the wake's server
// CPU. It forgets the registration, which stays in the epoll set until
// the connection is closed (the kernel drops it with the socket; a
// descriptor number reused later is a new socket) or fires once more, for
// an id no longer watched, when the client sends its next request or
// closes (EPOLLONESHOT then disarms it). A connection that waits again is
// re-registered in place (EEXIST: EPOLL_CTL_MOD). Those stale events cost
// little because the watcher waits in Go's own poller, not in a blocking
// epoll_wait: it is woken as goroutines are, and drains every event ready
// at once.
func watchGone(conn net.Conn, gone func()) (stop func(), ok bool) {
	w, id, ok := epollWatch(conn, goneWatch{gone: gone}, false)
	if !ok {
		return nil, false
	}
	return func() {
		// Once forgotten, the watcher neither peeks at the descriptor
		// (which may be closed and reused after this call) nor calls gone.
		w.forget(id)
	}, true
}

// awaitRequest is watchGone for an answered keep-alive connection, which
// it holds until the client's next request, without a goroutine
// (inbox_idle.go): next is called once a byte of it is waiting, gone once
// the client has gone away. stop forgets the watch, which calls neither
// after it returns. ok false: the connection cannot be watched.
func awaitRequest(conn net.Conn, next, gone func()) (stop func(), ok bool) {
	w, id, ok := epollWatch(conn, goneWatch{gone: gone, next: next}, true)
	if !ok {
		return nil, false
	}
	return func() { w.forget(id) }, true
}

// epollWatch registers conn with the process's epoll instance for watch,
// one-shot, and answers its registration's id. known: conn was most
// likely registered before (an answered call's connection, watched while
// it waited), so its registration is modified first, saving the system
// call of an ADD refused EEXIST.
func epollWatch(conn net.Conn, watch goneWatch, known bool) (w *goneWatcher, id uint64, ok bool) {
	sc, isSocket := conn.(syscall.Conn)
	if !isSocket {
		return nil, 0, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, 0, false
	}
	fd := -1
	if rc.Control(func(f uintptr) { fd = int(f) }) != nil || fd < 0 {
		return nil, 0, false
	}
	w = &epollWatcher
	if w.start() != nil {
		return nil, 0, false
	}
	watch.fd = fd
	w.mu.Lock()
	w.next++
	id = w.next
	w.watched[id] = watch
	w.mu.Unlock()
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLONESHOT, Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
	add, mod := syscall.EPOLL_CTL_ADD, syscall.EPOLL_CTL_MOD
	if known {
		add, mod = mod, add
	}
	err = syscall.EpollCtl(w.epfd, add, fd, &ev)
	if err == syscall.EEXIST || err == syscall.ENOENT { // registered before (by an earlier wait of this connection), or not
		err = syscall.EpollCtl(w.epfd, mod, fd, &ev)
	}
	if err != nil {
		w.forget(id)
		return nil, 0, false
	}
	return w, id, true
}

// epollWatcher is the process's watcher of waiting reads' connections.
var epollWatcher = goneWatcher{watched: map[uint64]goneWatch{}}

type goneWatcher struct {
	once    sync.Once
	epfd    int
	err     error
	mu      sync.Mutex
	next    uint64
	watched map[uint64]goneWatch // by registration, the id in the epoll event
}

type goneWatch struct {
	fd   int
	gone func()
	next func() // unless nil, called when a byte is waiting (awaitRequest)
}

// start opens the epoll instance, non-blocking and handed to Go's poller
// (an epoll descriptor is readable while events are ready), and starts
// the goroutine that reads it.
func (w *goneWatcher) start() error {
	w.once.Do(func() {
		w.epfd, w.err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if w.err != nil {
			return
		}
		if w.err = syscall.SetNonblock(w.epfd, true); w.err != nil {
			return
		}
		var rc syscall.RawConn
		if rc, w.err = os.NewFile(uintptr(w.epfd), "gone-epoll").SyscallConn(); w.err == nil {
			go w.loop(rc)
		}
	})
	return w.err
}

func (w *goneWatcher) forget(id uint64) {
	w.mu.Lock()
	delete(w.watched, id)
	w.mu.Unlock()
}

// loop takes every ready event without blocking and, when there is none,
// leaves the goroutine to Go's poller until there is.
func (w *goneWatcher) loop(rc syscall.RawConn) {
	events := make([]syscall.EpollEvent, 256)
	for {
		n := 0
		err := rc.Read(func(fd uintptr) bool {
			n, _ = syscall.EpollWait(int(fd), events, 0) // -1 on EINTR: wait again
			return n > 0
		})
		if err != nil { // Go's poller would not take it: block in epoll_wait
			w.blockingLoop(events)
		}
		w.dispatch(events[:n])
	}
}

// blockingLoop waits for events in epoll_wait itself, a thread blocked
// while none come.
func (w *goneWatcher) blockingLoop(events []syscall.EpollEvent) {
	for {
		n, err := syscall.EpollWait(w.epfd, events, -1)
		if err != nil {
			continue // EINTR
		}
		w.dispatch(events[:n])
	}
}

func (w *goneWatcher) dispatch(events []syscall.EpollEvent) {
	for _, ev := range events {
		w.fired(uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32)
	}
}

// fired peeks at a registered connection that became readable or was shut
// down by its peer: gone at an end of stream or an error, next (or nothing
// more) for a byte waiting (the next request), re-armed when it was
// neither.
func (w *goneWatcher) fired(id uint64) {
	w.mu.Lock()
	gw, ok := w.watched[id]
	if !ok {
		w.mu.Unlock()
		return // stopped meanwhile, or a registration left by a call that ended
	}
	var b [1]byte
	n, _, err := syscall.Recvfrom(gw.fd, b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	switch {
	case err == syscall.EAGAIN || err == syscall.EINTR:
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLONESHOT, Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
		syscall.EpollCtl(w.epfd, syscall.EPOLL_CTL_MOD, gw.fd, &ev)
		w.mu.Unlock()
		return
	case err == nil && n > 0:
		delete(w.watched, id) // alive: the watch stops
		w.mu.Unlock()
		if gw.next != nil {
			gw.next()
		}
		return
	}
	delete(w.watched, id)
	w.mu.Unlock()
	gw.gone()
}
