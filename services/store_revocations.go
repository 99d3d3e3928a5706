package services

import (
	"context"
	"slices"
	"sync"
	"time"
)

// revocations re-checks, for this process, the tokens that hold long-lived
// calls (waiting reads, streams): at every heartbeat one query asks which
// of them are still valid, and the calls of a token revoked (or deleted)
// meanwhile are told through a channel, which they answer with
// token_invalid (issue 23). One query per process and heartbeat, however
// many calls wait: a thousand idle waiting calls used to cost a thousand
// reads each heartbeat (issue 31).
//
// It holds only the set of token ids with calls open in this process, so it
// adds nothing two servers would have to share: each process checks its
// own calls against the database.
type revocations struct {
	mu      sync.Mutex
	watched map[int64]*revokeWatch // by token id
	running bool
}

// revokeWatch is one token's entry: how many calls watch it, and the
// channel closed when it is found revoked.
type revokeWatch struct {
	calls int
	gone  chan struct{}
	then  map[*func()]bool // the watchers that hold no goroutine (watchTokenThen)
}

// revokeChunk bounds the ids of one query, under SQLite's and PostgreSQL's
// limits on parameters.
const revokeChunk = 1000

func newRevocations() *revocations {
	return &revocations{watched: map[int64]*revokeWatch{}}
}

// watchToken registers a long-lived call of who's token: gone is closed
// once the token is found revoked; release ends the watch. A caller
// without a token (a web session) gets a channel that never closes.
func (f *Forum) watchToken(who Caller) (gone <-chan struct{}, release func()) {
	if who.TokenID == 0 {
		return nil, func() {}
	}
	w, release := f.watchTokenThen(who, nil)
	return w.gone, release
}

// watchTokenThen is watchToken for a call that holds no goroutine: then,
// unless nil, is called once the token is found revoked, in a goroutine of
// its own, unless release came first.
func (f *Forum) watchTokenThen(who Caller, then func()) (w *revokeWatch, release func()) {
	if who.TokenID == 0 {
		return nil, func() {}
	}
	r := f.revoked
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.watched[who.TokenID]
	if !ok {
		w = &revokeWatch{gone: make(chan struct{}), then: map[*func()]bool{}}
		r.watched[who.TokenID] = w
	}
	w.calls++
	key := &then
	if then != nil {
		w.then[key] = true
	}
	if !r.running {
		r.running = true
		go f.checkRevocations()
	}
	return w, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(w.then, key)
		if w.calls--; w.calls == 0 && r.watched[who.TokenID] == w {
			delete(r.watched, who.TokenID)
		}
	}
}

// checkRevocations runs while any call is watched: every heartbeat it reads
// which watched tokens are still valid and closes the channels of the
// others. A read that fails (the database is slow or away) is no reason to
// end calls that were admitted; the next heartbeat reads again.
func (f *Forum) checkRevocations() {
	r := f.revoked
	t := time.NewTicker(f.heartbeat)
	defer t.Stop()
	for range t.C {
		r.mu.Lock()
		if len(r.watched) == 0 {
			r.running = false
			r.mu.Unlock()
			return
		}
		ids := make([]int64, 0, len(r.watched))
		for id := range r.watched {
			ids = append(ids, id)
		}
		r.mu.Unlock()
		valid, err := f.validTokens(ids)
		if err != nil {
			continue
		}
		var then []func()
		r.mu.Lock()
		for _, id := range ids {
			if w, ok := r.watched[id]; ok && !valid[id] {
				close(w.gone)
				for fn := range w.then {
					then = append(then, *fn)
				}
				clear(w.then)
				delete(r.watched, id) // later calls of the token are refused at admission
			}
		}
		r.mu.Unlock()
		for _, fn := range then {
			go fn() // an answer may write and serve on its connection
		}
	}
}

// validTokens reads which of ids are tokens not revoked, in chunks of
// revokeChunk, each bounded by the query timeout.
func (f *Forum) validTokens(ids []int64) (map[int64]bool, error) {
	valid := make(map[int64]bool, len(ids))
	for chunk := range slices.Chunk(ids, revokeChunk) {
		ctx, cancel := context.WithTimeout(context.Background(), f.queryTimeout)
		var found []int64
		err := f.db.WithContext(ctx).Table("tokens").Where("id IN ? AND revoked_at IS NULL", chunk).Pluck("id", &found).Error
		cancel()
		if err != nil {
			return nil, err
		}
		for _, id := range found {
			valid[id] = true
		}
	}
	return valid, nil
}

// revokedRefusal is what a long-lived call answers once its token is gone.
func revokedRefusal() *Refusal {
	return Refuse(TokenInvalid, "the token was revoked while this call was open")
}
