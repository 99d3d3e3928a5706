package client

import (
	"encoding/json"
	"time"
)

// The wire shapes of docs/protocol.md §8.1, as a client reads them. They
// are declared here again, not imported: the client knows the wire, never
// the server's packages. A key the server adds later is ignored.

// Kind is a speech act (docs/protocol.md §4 and, for the dialectic
// profile's, §10).
type Kind string

// The nine acts of the core and the dialectic profile's four.
const (
	KindAsk     Kind = "ask"
	KindAnswer  Kind = "answer"
	KindClarify Kind = "clarify"
	KindNote    Kind = "note"
	KindPropose Kind = "propose"
	KindObject  Kind = "object"
	KindDecide  Kind = "decide"
	KindMark    Kind = "mark"
	KindReopen  Kind = "reopen"

	KindAssert Kind = "assert"
	KindAttest Kind = "attest"
	KindRefute Kind = "refute"
	KindVerify Kind = "verify"
)

// State is a thread's state (docs/protocol.md §5).
type State string

// The seven states.
const (
	Open     State = "open"
	Answered State = "answered"
	Decided  State = "decided"
	Closed   State = "closed"
	Deferred State = "deferred"
	Obsolete State = "obsolete"
	Rejected State = "rejected"
)

// Author is who wrote a message or caused an event.
type Author struct {
	Identity  string  `json:"identity"`
	Extension *string `json:"extension"`
	Badge     string  `json:"badge,omitempty"`
}

// Awaiting is whose reply a thread waits for: an identity or "*"
// (anyone), optionally one extension. A nil *Awaiting is nobody.
type Awaiting struct {
	Identity  string  `json:"identity"`
	Extension *string `json:"extension"`
}

// Address names an identity, optionally one of its extensions: an ask's to.
type Address struct {
	Identity  string `json:"identity"`
	Extension string `json:"extension,omitempty"`
}

// Provenance is what the client says about the model and program it runs.
type Provenance struct {
	Model  string `json:"model,omitempty"`
	Client string `json:"client,omitempty"`
}

// Evidence is a proof: a pointer, never an opinion (docs/protocol.md §10).
// Kind is one of url, hash, artifact, commit, log, reproducer, note, other.
type Evidence struct {
	Kind string `json:"kind"`
	Ref  string `json:"ref"`
	Note string `json:"note,omitempty"`
}

// Thread is a thread as every operation shows it.
type Thread struct {
	ID               string     `json:"id"`
	Title            string     `json:"title"`
	State            State      `json:"state"`
	StateOrigin      string     `json:"state_origin"`
	StateConfirmedAt *time.Time `json:"state_confirmed_at"`
	Confirmed        bool       `json:"confirmed"`
	StateOfRecord    State      `json:"state_of_record"`
	StateLabel       string     `json:"state_label"`
	Awaiting         *Awaiting  `json:"awaiting"`
	CreatedBy        Author     `json:"created_by"`
	CreatedAt        time.Time  `json:"created_at"`
	UpdatedAt        time.Time  `json:"updated_at"`
	MessageCount     int        `json:"message_count"`
	Guard            string     `json:"guard"`
	OverdueSince     *time.Time `json:"overdue_since"`
}

// Message is a stored envelope. Replies is set only by ReadThread.
type Message struct {
	ID         string      `json:"id"`
	Parley     string      `json:"parley"`
	Kind       Kind        `json:"kind"`
	Thread     string      `json:"thread"`
	Parent     *string     `json:"parent"`
	From       Author      `json:"from"`
	AuthorKind string      `json:"author_kind"`
	Body       string      `json:"body"`
	Provenance *Provenance `json:"provenance"`
	To         *Address    `json:"to,omitempty"`
	State      State       `json:"state,omitempty"`
	Awaiting   *Awaiting   `json:"awaiting"`
	CreatedAt  time.Time   `json:"created_at"`
	Claim      *string     `json:"claim,omitempty"`
	ReplyBy    *time.Time  `json:"reply_by,omitempty"`
	Replies    []*Message  `json:"replies,omitempty"`
}

// Event is one entry of the log (docs/protocol.md §8.1).
type Event struct {
	ID          string     `json:"id"`
	Thread      string     `json:"thread"`
	Type        string     `json:"type"`
	FromState   *string    `json:"from_state"`
	ToState     string     `json:"to_state"`
	Origin      string     `json:"origin"`
	Label       string     `json:"label"`
	Actor       Author     `json:"actor"`
	Message     *string    `json:"message"`
	At          time.Time  `json:"at"`
	ConfirmedAt *time.Time `json:"confirmed_at"`
	Claim       *string    `json:"claim,omitempty"`
}

// InboxItem is a thread awaiting the caller, with the message whose turn
// is open: the message to reply to.
type InboxItem struct {
	Thread  Thread   `json:"thread"`
	Message *Message `json:"message"`
}

// Claim is a claim of the dialectic profile (docs/protocol.md §10).
type Claim struct {
	ID           string     `json:"id"`
	Message      string     `json:"message"`
	Thread       string     `json:"thread"`
	Statement    string     `json:"statement"`
	Status       string     `json:"status"`
	Claimant     Author     `json:"claimant"`
	Evidence     []Evidence `json:"evidence"`
	Attestations []ClaimAct `json:"attestations"`
	Refutations  []ClaimAct `json:"refutations"`
	VerifiedBy   *ClaimAct  `json:"verified_by"`
	Supersedes   []string   `json:"supersedes"`
	SupersededBy *string    `json:"superseded_by"`
	ValidUntil   *time.Time `json:"valid_until"`
	CreatedAt    time.Time  `json:"created_at"`
}

// ClaimAct is one attestation, refutation or seal of a claim.
type ClaimAct struct {
	Message    string     `json:"message"`
	By         Author     `json:"by"`
	AuthorKind string     `json:"author_kind"`
	Body       string     `json:"body"`
	Evidence   []Evidence `json:"evidence"`
	At         time.Time  `json:"at"`
}

// Posted answers Post: the stored message, the thread after it, for a
// dialectic act the claim after it, and whether the server replayed an
// earlier post with the same idempotency key (nothing new was stored).
type Posted struct {
	Message  *Message `json:"message"`
	Thread   Thread   `json:"thread"`
	Claim    *Claim   `json:"claim,omitempty"`
	Replayed bool     `json:"replayed,omitempty"`
}

// ThreadView answers ReadThread: the thread and its messages nested by
// parent (the root, with its replies).
type ThreadView struct {
	Thread   Thread     `json:"thread"`
	Messages []*Message `json:"messages"`
	Cursor   *string    `json:"cursor,omitempty"`
	More     *bool      `json:"more,omitempty"`
}

// Walk calls fn for every message of the view, parents before their
// replies, each level in creation order.
func (v ThreadView) Walk(fn func(*Message)) {
	var walk func([]*Message)
	walk = func(ms []*Message) {
		for _, m := range ms {
			fn(m)
			walk(m.Replies)
		}
	}
	walk(v.Messages)
}

// InboxPage answers Inbox. Cursor always marks a position: pass it back
// as Since to receive only what is new.
type InboxPage struct {
	Items  []InboxItem `json:"items"`
	Cursor string      `json:"cursor"`
}

// EventPage answers Events; Cursor as InboxPage's.
type EventPage struct {
	Events []Event `json:"events"`
	Cursor string  `json:"cursor"`
}

// Me answers Whoami.
type Me struct {
	Identity   string   `json:"identity"`
	AuthorKind string   `json:"author_kind"`
	Rights     []string `json:"rights"`
	Label      string   `json:"label"`
	Badge      *string  `json:"badge"`
	Inbox      struct {
		Count int `json:"count"`
	} `json:"inbox"`
	Manifest struct {
		Parley  string `json:"parley"`
		Version string `json:"version"`
		Digest  string `json:"digest"`
	} `json:"manifest"`
}

// Manifest is the part of the manifest a client acts on; Raw holds all of
// it, for a model to read.
type Manifest struct {
	Parley   string         `json:"parley"`
	Limits   map[string]int `json:"limits"`
	Profiles []struct {
		Name string `json:"name"`
	} `json:"profiles"`
	Norms []string        `json:"norms"`
	Raw   json.RawMessage `json:"-"`
}
