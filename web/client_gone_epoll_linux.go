//go:build linux

package web

import (
	"net"
	"sync"
	"syscall"
)

// watchGone calls gone once the client of a waiting read's connection goes
// away (a FIN or an RST), as watchClient tells it, but without a goroutine
// per call: the process has one epoll instance for every such connection
// and one goroutine waiting on it (issue 31: ten thousand waiting calls
// held three goroutines each). The connection is registered one-shot for
// readability and peer shutdown; when it fires, a peek (MSG_PEEK, consuming
// nothing) tells an end of stream or a reset (gone) from the client's next
// request arriving early (alive: the watch just stops, as watchClient's
// does). stop deregisters the connection and returns once gone can no
// longer be called. ok is false where the connection is not a socket: then
// the call is not watched and ends at its wait, as before.
func watchGone(conn net.Conn, gone func()) (stop func(), ok bool) {
	sc, isSocket := conn.(syscall.Conn)
	if !isSocket {
		return nil, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, false
	}
	fd := -1
	if rc.Control(func(f uintptr) { fd = int(f) }) != nil || fd < 0 {
		return nil, false
	}
	w := &epollWatcher
	if w.start() != nil {
		return nil, false
	}
	w.mu.Lock()
	w.next++
	id := w.next
	w.watched[id] = goneWatch{fd: fd, gone: gone}
	w.mu.Unlock()
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLONESHOT, Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
	if syscall.EpollCtl(w.epfd, syscall.EPOLL_CTL_ADD, fd, &ev) != nil {
		w.forget(id)
		return nil, false
	}
	return func() {
		// Forgotten first: once it is, the watcher neither peeks at the
		// descriptor (which may be closed and reused after this call)
		// nor calls gone.
		w.forget(id)
		syscall.EpollCtl(w.epfd, syscall.EPOLL_CTL_DEL, fd, nil)
	}, true
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
}

func (w *goneWatcher) start() error {
	w.once.Do(func() {
		w.epfd, w.err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if w.err == nil {
			go w.loop()
		}
	})
	return w.err
}

func (w *goneWatcher) forget(id uint64) {
	w.mu.Lock()
	delete(w.watched, id)
	w.mu.Unlock()
}

func (w *goneWatcher) loop() {
	events := make([]syscall.EpollEvent, 256)
	for {
		n, err := syscall.EpollWait(w.epfd, events, -1)
		if err != nil {
			continue // EINTR
		}
		for _, ev := range events[:n] {
			w.fired(uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32)
		}
	}
}

// fired peeks at a registered connection that became readable or was shut
// down by its peer: gone at an end of stream or an error, nothing more for
// a byte waiting (the next request), re-armed when it was neither.
func (w *goneWatcher) fired(id uint64) {
	w.mu.Lock()
	gw, ok := w.watched[id]
	if !ok {
		w.mu.Unlock()
		return // stopped meanwhile
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
		return
	}
	delete(w.watched, id)
	w.mu.Unlock()
	gw.gone()
}
