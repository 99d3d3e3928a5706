package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// Handler handles one turn: it reads what it needs, posts its reply
// through t.Post and returns nil once the turn is done. An error that
// Temporary reports hands the same turn again after a wait; any other
// error stops Follow, which returns it, with the turn not done.
//
// A refusal of a reply is usually the end of the turn, not an error to
// return: the server said why (norm 7: fix the envelope, never resend it
// unchanged; loop_suspected means stop). Return nil to move on.
type Handler func(ctx context.Context, t *Turn) error

// FollowOptions set up Follow.
type FollowOptions struct {
	// Extension is the sub-agent that follows its inbox and posts; ""
	// for none.
	Extension string
	// Addressed follows only the turns that name the caller, leaving out
	// those awaiting anyone (docs/protocol.md §8, errata 2).
	Addressed bool
	// Store keeps the cursor across restarts. nil: a MemoryStore of
	// Follow's own, so a new process starts from the oldest open turn.
	Store CursorStore
	// Wait is how long one waiting read holds (feed profile, §13):
	// default and ceiling the manifest's wait_max_seconds.
	Wait time.Duration
}

// Turn is a turn handed to a Handler: the thread awaiting the caller and
// the message whose turn is open, the one to reply to.
type Turn struct {
	Thread   Thread
	Message  *Message
	Identity string // the caller's identity
	Cursor   string // the inbox position of this turn; saved once it is done

	c     *Client
	ext   string
	base  string // the root of the turn's idempotency keys
	mu    sync.Mutex
	posts int
}

// Client is the client the turn came through, for reads and posts that
// are not the turn's reply.
func (t *Turn) Client() *Client { return t.c }

// Read reads the turn's whole thread.
func (t *Turn) Read(ctx context.Context) (ThreadView, error) {
	return t.c.ReadThread(ctx, t.Thread.ID, ThreadQuery{})
}

// Post posts e as part of the turn: from Follow's extension unless e names
// one, and, unless e carries a key, with the idempotency key of the turn's
// n-th post (n counting from 0 in the order of the calls). A turn handed
// again — after a crash, a failed handler, a restart — derives the same
// keys, so the posts its first handling got stored are answered again
// (Replayed) rather than stored twice, provided the handler sends the same
// envelopes in the same order. One that sends a different envelope under
// a key already used is refused idempotency_key_reused: that post of the
// turn was stored already, with the first handling's words.
func (t *Turn) Post(ctx context.Context, e Envelope) (Posted, error) {
	t.mu.Lock()
	n := t.posts
	t.posts++
	t.mu.Unlock()
	if e.IdempotencyKey == "" {
		e.IdempotencyKey = t.base + "." + strconv.Itoa(n)
	}
	if e.From == nil && t.ext != "" {
		e = e.WithExtension(t.ext)
	}
	return t.c.Post(ctx, e)
}

// Follow hands the caller's turns to h one at a time, oldest first, until
// ctx ends or h fails for good; it returns ctx's error or h's.
//
// It reads the inbox with waiting reads (feed profile, docs/protocol.md
// §13), one turn a read (limit 1), so that each turn has a cursor of its
// own: the turn's cursor is saved in the store after h returned nil for it
// — the commit point — and the next read starts there. A process killed at
// any moment therefore resumes, on the same store, at the first turn it
// had not finished: no turn is missed, and a finished turn is never handed
// again.
//
// The guarantee is at-least-once for the handler and once for the forum.
// The turn in progress when the process died is handed again after the
// restart (unless its reply moved the turn already: the inbox lists only
// turns still open). What h did outside the forum during the first try
// happened once more; its posts through t.Post did not, since the turn's
// idempotency keys are derived from the turn and the server stores a post
// under a key once (§3, errata 2). A handler whose only effects are its
// posts through t.Post is thus effectively exactly-once; one with other
// effects makes them idempotent itself, keyed on t.Cursor.
//
// Reading: the SSE stream (§13) would save a request per turn, but its
// turns are those of the inbox without an extension, and it has no
// addressed view; waiting reads serve every extension and view alike, and
// hold no connection between turns. Outages and rate limits are waited
// out: a read that fails with a Temporary error is tried again with
// backoff for as long as ctx lasts.
func (c *Client) Follow(ctx context.Context, h Handler, o FollowOptions) error {
	if o.Store == nil {
		o.Store = &MemoryStore{}
	}
	var me Me
	if err := c.persist(ctx, func() (err error) { me, err = c.Whoami(ctx, o.Extension); return err }); err != nil {
		return err
	}
	wait, err := c.followWait(ctx, o.Wait)
	if err != nil {
		return err
	}
	key := CursorKey(me.Identity, o.Extension, o.Addressed)
	cursor, err := o.Store.Load(ctx, key)
	if err != nil {
		return fmt.Errorf("parley follow: load cursor: %w", err)
	}
	for {
		var page InboxPage
		err := c.persist(ctx, func() (err error) {
			page, err = c.Inbox(ctx, InboxQuery{Extension: o.Extension, Since: cursor, Limit: 1, Wait: wait, Addressed: o.Addressed})
			return err
		})
		if err != nil {
			return err
		}
		if len(page.Items) == 0 {
			if page.Cursor != "" {
				cursor = page.Cursor
			}
			continue
		}
		it := page.Items[0]
		t := &Turn{Thread: it.Thread, Message: it.Message, Identity: me.Identity, Cursor: page.Cursor,
			c: c, ext: o.Extension, base: turnKey(key, page.Cursor, it.Message)}
		if err := c.persist(ctx, func() error { t.posts = 0; return h(ctx, t) }); err != nil {
			return fmt.Errorf("parley follow: turn in %s at %s: %w", it.Thread.ID, it.Message.ID, err)
		}
		if err := o.Store.Save(ctx, key, page.Cursor); err != nil {
			return fmt.Errorf("parley follow: save cursor: %w", err)
		}
		cursor = page.Cursor
	}
}

// followWait is the wait of one read: wanted, else the manifest's
// wait_max_seconds, never beyond it.
func (c *Client) followWait(ctx context.Context, wanted time.Duration) (time.Duration, error) {
	var m Manifest
	if err := c.persist(ctx, func() (err error) { m, err = c.Manifest(ctx); return err }); err != nil {
		return 0, err
	}
	most := time.Duration(m.Limits["wait_max_seconds"]) * time.Second
	if wanted <= 0 || wanted > most {
		return most, nil
	}
	return wanted, nil
}

// persist runs fn until it succeeds, fails for good or ctx ends, waiting
// after each Temporary failure as Retry does, but without a bound on
// attempts: an agent outlives an outage.
func (c *Client) persist(ctx context.Context, fn func() error) error {
	for n := 0; ; n++ {
		err := fn()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !Temporary(err) {
			return err
		}
		if err := sleep(ctx, c.retry.withDefaults().delay(n, err)); err != nil {
			return err
		}
	}
}

// turnKey is the root of a turn's idempotency keys: the same for the same
// turn of the same follower, whatever process reads it.
func turnKey(storeKey, cursor string, m *Message) string {
	id := ""
	if m != nil {
		id = m.ID
	}
	sum := sha256.Sum256([]byte(storeKey + "\x00" + cursor + "\x00" + id))
	return "t." + hex.EncodeToString(sum[:16])
}
