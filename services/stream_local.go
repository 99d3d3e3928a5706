package services

import (
	"context"
	"sync"
	"time"

	"parley/models"
)

// The stream's slots (docs/protocol.md §13, "a closed stream stops
// counting", errata 2). The streams table is the truth: a row per open
// stream, counted against streams_per_token by every process on the
// database (and likewise a row per /live stream of a web page, counted per
// session; see call_slots.go). What a process keeps in memory is only a
// cache of its own rows — which of them it serves, and how to reach each —
// so that it can refresh their seen_at in one statement and probe them
// when a token (or a session) is at its limit; a process that restarts has no rows to remember (they age
// out), and any number of processes share one database.
//
// How a slot is released when its client goes away:
//
//   - The transport watches each stream's connection (web/sse.go): a FIN or
//     an RST ends the stream at once, and the stream deletes its row. This
//     holds in every process, so a stream of another process is released
//     as quickly as a local one.
//   - A failed write (a heartbeat, an item) ends the stream the same way.
//   - Before refusing for streams_per_token, the process probes each of the
//     token's streams it serves itself: the stream writes a heartbeat and
//     flushes it now; a failed write releases the slot, and the count is
//     taken again.
//   - A process that died cannot delete its rows: its owner refreshes
//     seen_at every streamRefresh, and a row not refreshed for streamFresh
//     stops counting.
//
// Scaling: the cache costs a map entry per local stream; the refresh is one
// UPDATE per process every streamRefresh, whatever the number of its
// streams (in batches of streamRefreshBatch ids); a probe touches only the
// token's own local streams, at most streams_per_token of them, and only
// when that token is at its limit.

// streamRefresh is how often a process refreshes the seen_at of its
// streams; streamFresh is how long a row not refreshed keeps counting (its
// process died), and so the longest retry_after of a stream refusal. Three
// refreshes may be missed (a slow database) before a live stream stops
// counting. The refresh is one cheap UPDATE per process; on SQLite it also
// wakes the other processes' waiters once per streamRefresh (a write to
// the file), which then read the log again and find nothing new.
const (
	streamRefresh      = 2 * time.Second
	streamFresh        = 3 * streamRefresh
	streamRefreshBatch = 500
)

// streamProbeWait bounds how long a refusal waits for the token's local
// streams to answer a probe. A stream that does not answer in time (its
// client reads slowly, its write is blocked) counts as alive.
const streamProbeWait = 2 * time.Second

// streamRetryAfter is the retry_after of a refusal for streams_per_token,
// in seconds: the time after which a slot is sure to be free if the client
// closes one of the counted streams, whichever it closes. A stream's owner
// sees its connection close at once and deletes its row within a round
// trip, so a local stream (probed just now) is free within a second; a
// stream of another process is too while that process lives, and if it
// has died, its row stops counting streamFresh after its last refresh.
// So: one second, or the time until the freshest row of another process
// would go stale, whichever is longer (at most streamFresh).
func (f *Forum) streamRetryAfter(h holder, counted []models.Stream, now time.Time) int {
	l := f.streams
	l.mu.Lock()
	mine := l.byHolder[h]
	retry := time.Second
	for _, s := range counted {
		if _, ok := mine[s.ID]; !ok {
			retry = max(retry, s.SeenAt.Add(streamFresh).Sub(now))
		}
	}
	l.mu.Unlock()
	return int((retry + time.Second - 1) / time.Second)
}

// localStreams is this process's streams and /live streams, by holder.
type localStreams struct {
	mu         sync.Mutex
	byHolder   map[holder]map[int64]*localStream
	n          int
	refreshing bool
}

// localStream is one stream this process serves. probe asks it to write a
// heartbeat now; it answers on the channel it is given, with the write's
// error. gone is closed once the stream has ended and deleted its row.
type localStream struct {
	id    int64
	h     holder
	probe chan chan error
	gone  chan struct{}
}

func newLocalStreams() *localStreams {
	return &localStreams{byHolder: map[holder]map[int64]*localStream{}}
}

// add records a local stream, and starts the refresher if it is the first.
func (f *Forum) addLocalStream(id int64, h holder) *localStream {
	ls := &localStream{id: id, h: h, probe: make(chan chan error), gone: make(chan struct{})}
	l := f.streams
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byHolder[h] == nil {
		l.byHolder[h] = map[int64]*localStream{}
	}
	l.byHolder[h][id] = ls
	l.n++
	if !l.refreshing {
		l.refreshing = true
		go f.refreshStreams()
	}
	return ls
}

// endLocalStream deletes a stream's row, then forgets it.
func (f *Forum) endLocalStream(ls *localStream) {
	f.closeSlot(ls.id)
	l := f.streams
	l.mu.Lock()
	delete(l.byHolder[ls.h], ls.id)
	if len(l.byHolder[ls.h]) == 0 {
		delete(l.byHolder, ls.h)
	}
	l.n--
	l.mu.Unlock()
	close(ls.gone)
}

// refreshStreams refreshes the seen_at of every local stream every
// streamRefresh, in one statement per batch, until there are none.
func (f *Forum) refreshStreams() {
	t := time.NewTicker(streamRefresh)
	defer t.Stop()
	for range t.C {
		l := f.streams
		l.mu.Lock()
		if l.n == 0 {
			l.refreshing = false
			l.mu.Unlock()
			return
		}
		ids := make([]int64, 0, l.n)
		for _, m := range l.byHolder {
			for id := range m {
				ids = append(ids, id)
			}
		}
		l.mu.Unlock()
		now := f.timestamp()
		for len(ids) > 0 {
			batch := ids[:min(len(ids), streamRefreshBatch)]
			ids = ids[len(batch):]
			ctx, cancel := context.WithTimeout(context.Background(), f.queryTimeout)
			f.db.WithContext(ctx).Model(&models.Stream{}).Where("id IN ?", batch).Update("seen_at", now)
			cancel()
		}
	}
}

// probeLocalStreams asks each of the holder's local streams to write a
// heartbeat now, and answers how many of them ended (their rows deleted)
// within streamProbeWait.
func (f *Forum) probeLocalStreams(h holder) int {
	l := f.streams
	l.mu.Lock()
	var mine []*localStream
	for _, ls := range l.byHolder[h] {
		mine = append(mine, ls)
	}
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), streamProbeWait)
	defer cancel()
	released := make(chan bool, len(mine))
	for _, ls := range mine {
		go func() { released <- ls.check(ctx) }()
	}
	n := 0
	for range mine {
		if <-released {
			n++
		}
	}
	return n
}

// check probes one stream: true when it ended (its row deleted), false when
// its heartbeat went out or ctx ended first (it counts as alive).
func (ls *localStream) check(ctx context.Context) bool {
	reply := make(chan error, 1)
	select {
	case ls.probe <- reply:
	case <-ls.gone:
		return true
	case <-ctx.Done():
		return false
	}
	select {
	case err := <-reply:
		if err == nil {
			return false
		}
	case <-ls.gone:
		return true
	case <-ctx.Done():
		return false
	}
	// The write failed: the stream ends, and deletes its row.
	select {
	case <-ls.gone:
		return true
	case <-ctx.Done():
		return false
	}
}
