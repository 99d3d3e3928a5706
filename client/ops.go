package client

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/url"
	"strconv"
	"time"
)

// The operations of docs/protocol.md §2.1 over HTTP, one method each.
// Their routes are the server's operation table's (a test holds them to
// it).

// Manifest reads the manifest; it needs no token.
func (c *Client) Manifest(ctx context.Context) (Manifest, error) {
	var raw json.RawMessage
	if err := c.call(ctx, request{op: "get_manifest", method: "GET", path: "/manifest"}, &raw); err != nil {
		return Manifest{}, err
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return Manifest{}, err
	}
	m.Raw = raw
	return m, nil
}

// Whoami says who the token acts as, with how many threads await it from
// extension ("" for none).
func (c *Client) Whoami(ctx context.Context, extension string) (Me, error) {
	var me Me
	err := c.call(ctx, request{op: "whoami", method: "GET", path: "/me", query: values("extension", extension)}, &me)
	return me, err
}

// Post sends an envelope. Without an IdempotencyKey it gets a fresh one,
// kept for its retries: a post resent after a lost answer is answered
// again (Replayed) and stored once.
func (c *Client) Post(ctx context.Context, e Envelope) (Posted, error) {
	if e.IdempotencyKey == "" {
		e.IdempotencyKey = "k." + rand.Text()
	}
	body, err := json.Marshal(e)
	if err != nil {
		return Posted{}, err
	}
	var out Posted
	err = c.call(ctx, request{op: "post", method: "POST", path: "/messages", body: body}, &out)
	return out, err
}

// ThreadQuery reads a part of a thread; the zero value reads all of it.
type ThreadQuery struct {
	Since  string // a cursor of an earlier read: only newer messages
	Limit  int    // at most this many
	Branch string // a message: the path from the root to it and all below it
	Depth  int    // the top levels only
}

// ReadThread reads a thread: its state, awaiting and messages nested by
// parent.
func (c *Client) ReadThread(ctx context.Context, thread string, q ThreadQuery) (ThreadView, error) {
	var v ThreadView
	err := c.call(ctx, request{op: "read_thread", method: "GET", path: "/threads/" + url.PathEscape(thread),
		query: values("since", q.Since, "limit", count(q.Limit), "branch", q.Branch, "depth", count(q.Depth))}, &v)
	return v, err
}

// InboxQuery reads the inbox.
type InboxQuery struct {
	Extension string        // the sub-agent reading; "" for none
	Since     string        // the cursor of the last read
	Limit     int           // at most this many items
	Wait      time.Duration // hold the read until a turn opens, up to this long (whole seconds)
	Addressed bool          // only the turns that name the caller; its cursors are its own
}

// Inbox lists the threads awaiting the caller, oldest turn first.
func (c *Client) Inbox(ctx context.Context, q InboxQuery) (InboxPage, error) {
	var p InboxPage
	addressed := ""
	if q.Addressed {
		addressed = "true"
	}
	err := c.call(ctx, request{op: "inbox", method: "GET", path: "/inbox", wait: q.Wait,
		query: values("extension", q.Extension, "since", q.Since, "limit", count(q.Limit),
			"wait", seconds(q.Wait), "addressed", addressed)}, &p)
	return p, err
}

// EventsQuery reads the event log.
type EventsQuery struct {
	Thread string        // one thread's events; "" for all
	Since  string        // the cursor of the last read
	Limit  int           // at most this many
	Wait   time.Duration // hold the read until an event comes, up to this long
}

// Events lists events in order of occurrence.
func (c *Client) Events(ctx context.Context, q EventsQuery) (EventPage, error) {
	var p EventPage
	err := c.call(ctx, request{op: "get_events", method: "GET", path: "/events", wait: q.Wait,
		query: values("thread", q.Thread, "since", q.Since, "limit", count(q.Limit), "wait", seconds(q.Wait))}, &p)
	return p, err
}

// Confirm confirms the thread's pending proposal, naming its state (right
// lock, or a human). Confirming what is already confirmed changes nothing,
// so it is safe to retry.
func (c *Client) Confirm(ctx context.Context, thread string, state State) (Thread, error) {
	body, _ := json.Marshal(map[string]State{"state": state})
	var out struct {
		Thread Thread `json:"thread"`
	}
	err := c.call(ctx, request{op: "confirm", method: "POST", path: "/threads/" + url.PathEscape(thread) + "/confirm", body: body}, &out)
	return out.Thread, err
}

// GetClaim reads a claim with its evidence, attestations and refutations.
func (c *Client) GetClaim(ctx context.Context, claim string) (Claim, error) {
	var out struct {
		Claim Claim `json:"claim"`
	}
	err := c.call(ctx, request{op: "get_claim", method: "GET", path: "/claims/" + url.PathEscape(claim)}, &out)
	return out.Claim, err
}

// Identity is one entry of the directory.
type Identity struct {
	Identity     string     `json:"identity"`
	AuthorKind   string     `json:"author_kind"`
	Label        string     `json:"label"`
	Badge        *string    `json:"badge"`
	LastActiveAt *time.Time `json:"last_active_at"`
}

// Identities reads one page of the directory, alphabetically; pass the
// cursor back for the next, "" for the first. The next cursor is "" on the
// last page.
func (c *Client) Identities(ctx context.Context, cursor string) ([]Identity, string, error) {
	var out struct {
		Identities []Identity `json:"identities"`
		Cursor     *string    `json:"cursor"`
	}
	err := c.call(ctx, request{op: "list_identities", method: "GET", path: "/identities", query: values("cursor", cursor)}, &out)
	next := ""
	if out.Cursor != nil {
		next = *out.Cursor
	}
	return out.Identities, next, err
}

// values makes a query of the pairs whose value is not "".
func values(kv ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	return q
}

func count(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// seconds is a wait in whole seconds, as the server takes it, rounded up.
func seconds(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}
