package services

import (
	"context"
	"crypto/rand"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// feedCheckEvery is how often the listener checks that it hears: it
// NOTIFYs itself through the pool, as every other process's writes do, and
// expects the notification back within feedCheckWait. It also checks at
// each (re)connection.
const (
	feedCheckEvery = time.Minute
	feedCheckWait  = time.Second
)

// probePayload starts a self-check's payload: "probe <process> <n>".
// Positions are numbers, so no announcement of a write starts so.
const probePayload = "probe"

// feedState is what this process knows of its LISTEN connection: whether
// it is connected, and whether it heard its last self-check. While it is
// down or deaf the hub polls (feedPoll) and FeedProblem says why.
//
// Reading: a LISTEN that succeeds can still hear nothing — through a
// pooler in transaction mode (PgBouncer) the LISTEN runs on a server
// connection that goes back to the pool at once, and the notifications it
// receives reach no one (issue 24). Only a notification coming back proves
// it works, so the listener sends itself one.
type feedState struct {
	mu        sync.Mutex
	on        bool   // StartFeed runs on PostgreSQL
	listening bool   // the LISTEN connection is up
	deafSince string // why the last self-check failed; "" if it was heard
	id        string // this process's self-checks
	seq       int64
	probes    map[int64]chan struct{} // self-checks awaiting their notification
	change    chan struct{}           // closed at each change of listening or deafSince
	roundTrip time.Duration           // the last self-check heard, NOTIFY to hearing it (FeedHealth)
	connected chan struct{}           // a (re)connection, for an immediate check
}

func (s *feedState) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on = true
	s.id = strings.ToLower(rand.Text()[:12])
	s.probes = map[int64]chan struct{}{}
	s.change = make(chan struct{})
	s.connected = make(chan struct{}, 1)
}

// changed returns a channel closed at the next change of state.
func (s *feedState) changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.change == nil {
		s.change = make(chan struct{})
	}
	return s.change
}

func (s *feedState) notifyChange() {
	close(s.change)
	s.change = make(chan struct{})
}

func (s *feedState) setListening(up bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.on || s.listening == up {
		return
	}
	s.listening = up
	s.notifyChange()
	if up {
		select {
		case s.connected <- struct{}{}:
		default:
		}
	}
}

func (s *feedState) setDeaf(why string) (was string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	was, s.deafSince = s.deafSince, why
	if was != why {
		s.notifyChange()
	}
	return was
}

// deaf reports whether waiters must poll: the listener is down or did not
// hear its last self-check.
func (s *feedState) deaf() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.on && (!s.listening || s.deafSince != "")
}

// newProbe registers a self-check: its payload, and a channel closed when
// the listener hears it.
func (s *feedState) newProbe() (int64, string, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	ch := make(chan struct{})
	s.probes[s.seq] = ch
	return s.seq, probePayload + " " + s.id + " " + strconv.FormatInt(s.seq, 10), ch
}

func (s *feedState) dropProbe(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.probes, n)
}

// heard takes a self-check's notification (its payload after "probe"):
// this process's own, or another's, which it ignores.
func (s *feedState) heard(fields []string) {
	if len(fields) != 2 {
		return
	}
	n, _ := strconv.ParseInt(fields[1], 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	if fields[0] != s.id {
		return
	}
	if ch, ok := s.probes[n]; ok {
		close(ch)
		delete(s.probes, n)
	}
}

// FeedProblem says why waiting reads and streams of this process are not
// woken by notifications, and poll instead; "" when they are (or on
// SQLite, or without StartFeed). /readyz reports it as degraded.
func (f *Forum) FeedProblem() string {
	s := &f.listener
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.on:
		return ""
	case !s.listening:
		return "the LISTEN connection is down (reconnecting); waiting reads poll every " + feedPoll.String()
	case s.deafSince != "":
		return s.deafSince
	}
	return ""
}

// deafMessage is the error a deaf listener logs, naming the fix.
var deafMessage = "the LISTEN connection did not hear its own notification within 1s: LISTEN does not work on this connection " +
	"(through a pooler in transaction mode, such as PgBouncer's, it cannot); set --db-listen-url (PARLEY_DATABASE_LISTEN_URL) " +
	"to a direct or session-mode PostgreSQL URL; until then waiting reads poll every " + feedPoll.String()

// checkFeed runs the listener's self-checks: at each (re)connection and
// every feedCheckEvery.
func (f *Forum) checkFeed(ctx context.Context, channel string, log *slog.Logger) {
	t := time.NewTicker(feedCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-f.listener.connected:
		}
		f.probeFeed(ctx, channel, log)
	}
}

// probeFeed NOTIFYs this process's listener through the pool and waits
// feedCheckWait for it to hear.
func (f *Forum) probeFeed(ctx context.Context, channel string, log *slog.Logger) {
	n, payload, heard := f.listener.newProbe()
	defer f.listener.dropProbe(n)
	sent := time.Now()
	nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := f.db.WithContext(nctx).Exec("SELECT pg_notify(?, ?)", strings.Trim(channel, `"`), payload).Error
	cancel()
	if err != nil {
		log.Warn("feed: self-check could not notify", "err", err)
		return
	}
	select {
	case <-ctx.Done():
		return
	case <-heard:
		f.listener.mu.Lock()
		f.listener.roundTrip = time.Since(sent)
		f.listener.mu.Unlock()
		if was := f.listener.setDeaf(""); was != "" {
			log.Info("feed: the LISTEN connection hears notifications again; waiting reads no longer poll")
		}
	case <-time.After(feedCheckWait):
		f.listener.setDeaf(deafMessage)
		log.Error("feed: " + deafMessage)
	}
}
