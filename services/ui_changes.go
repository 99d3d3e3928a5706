package services

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"time"
)

// liveStreamsPerSession is how many /live streams one signed-in session
// may hold at once, across every server process: a page open in a tab
// holds one. Eight is more tabs than a person watches (and a browser opens
// at most six connections to a server over HTTP/1.1), while one session
// can no longer fill the server's connections with streams (issue 23).
const liveStreamsPerSession = 8

// Changes tells a signed-in page that the forum changed (docs/protocol.md §13:
// the web UI updates from the stream instead of polling): send gets the
// highest announced log position each time it rises, and 0 as a
// heartbeat: at once, when Changes listens (so that a caller that waits
// for it before it answers misses no later advance), then every
// heartbeat. It reads nothing of the forum; the page asks for what it
// shows, with its version. It returns when send fails or ctx ends.
//
// session is the page's session cookie. Changes resolves it first (a
// session that is not signed in is token_missing or token_invalid, before
// anything is sent), counts it against liveStreamsPerSession (rate_limited
// beyond, after probing the session's streams in this process, as a
// stream does) and resolves it again at each heartbeat: once the session
// has ended — signed out, expired — Changes returns that refusal, and the
// binding tells the page it is signed out.
func (f *Forum) Changes(ctx context.Context, session string, send func(pos int64) error) error {
	sess, err := f.SessionCaller(ctx, session)
	if err != nil {
		return err
	}
	if err := need(sess.Caller, RightRead); err != nil {
		return err
	}
	h := holder{slotLive, sessionKey(session)}
	id, err := f.openProbing(ctx, h, liveStreamsPerSession, func(n int) string {
		return fmt.Sprintf("this session has %d live pages open already, the most it may; close a tab first", n)
	})
	if err != nil {
		return err
	}
	ls := f.addLocalStream(id, h)
	defer f.endLocalStream(ls)
	beat := time.NewTicker(f.heartbeat)
	defer beat.Stop()
	last := f.hub.position()
	if err := send(0); err != nil {
		return nil
	}
	for {
		signal := f.hub.wait()
		if pos := f.hub.position(); pos > last {
			last = pos
			if err := send(pos); err != nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-signal:
		case <-beat.C:
			if r := f.sessionHolds(ctx, session); r != nil {
				return r
			}
			if err := send(0); err != nil {
				return nil
			}
		case reply := <-ls.probe:
			err := send(0)
			reply <- err
			if err != nil {
				return nil
			}
		}
	}
}

// sessionHolds re-checks a session for a long-lived call: its refusal
// once the session has ended, nil while it holds or when the check could
// not be made (see stillAdmitted).
func (f *Forum) sessionHolds(ctx context.Context, session string) *Refusal {
	ctx, cancel := context.WithTimeout(ctx, f.queryTimeout)
	defer cancel()
	_, err := f.SessionCaller(ctx, session)
	return stillAdmitted(err)
}

// sessionKey is what a session's /live streams count under: 63 bits of the
// SHA-256 of its cookie (the hash the sessions table keeps), never 0.
func sessionKey(session string) int64 {
	sum := sha256.Sum256([]byte(session))
	return int64(binary.BigEndian.Uint64(sum[:8])>>1) | 1
}
