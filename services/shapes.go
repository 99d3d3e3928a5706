package services

import (
	"time"
	"unicode/utf8"

	"github.com/invopop/jsonschema"

	"parley/models"
)

// The wire shapes of docs/protocol.md §8.1. They are the contract of both
// bindings: the JSON API encodes them and MCP returns them as
// structuredContent.

// Awaiting names who must reply: an identity or "*" (anyone), optionally
// one extension. A nil *Awaiting is nobody.
type Awaiting struct {
	Identity  string  `json:"identity"`
	Extension *string `json:"extension" jsonschema:"nullable"`
}

// Author is who wrote a message or caused an event.
type Author struct {
	Identity  string  `json:"identity"`
	Extension *string `json:"extension" jsonschema:"nullable"`
	Badge     string  `json:"badge,omitempty"`
}

// OwnedAuthor is an author with the owner it acted for (docs/protocol.md
// §15.1, profile witness): a Message's from, a claim's claimant and the
// authors of its acts, so that everyone sees which agents act for whom.
type OwnedAuthor struct {
	Author
	Owner *string `json:"owner" jsonschema:"nullable" jsonschema_description:"Witness profile: the human the author acted for, human:<name> (a human owns itself); null for a token that is its own party. The identities of one owner form one party."`
}

// Provenance is what the client says about the model and client it runs.
type Provenance struct {
	Model  string `json:"model,omitempty"`
	Client string `json:"client,omitempty"`
}

// Thread is a thread as every operation shows it.
type Thread struct {
	ID               string     `json:"id"`
	Title            string     `json:"title"`
	State            State      `json:"state"`
	StateOrigin      string     `json:"state_origin"`
	StateConfirmedAt *time.Time `json:"state_confirmed_at" jsonschema:"nullable"`
	Confirmed        bool       `json:"confirmed"`
	StateOfRecord    State      `json:"state_of_record"`
	StateLabel       string     `json:"state_label"`
	Awaiting         *Awaiting  `json:"awaiting" jsonschema:"nullable"`
	CreatedBy        Author     `json:"created_by"`
	CreatedAt        time.Time  `json:"created_at"`
	UpdatedAt        time.Time  `json:"updated_at"`
	MessageCount     int        `json:"message_count"`

	// The guard profile (docs/protocol.md §14).
	Guard        string     `json:"guard" jsonschema:"enum=active,enum=paused" jsonschema_description:"Guard profile: \"paused\" while the thread holds guard_thread_run_max model messages in a row (models are refused loop_suspected until a human or a lock holder acts in it); \"active\" otherwise."`
	OverdueSince *time.Time `json:"overdue_since" jsonschema:"nullable" jsonschema_description:"Guard profile: the reply_by of the open turn's ask once it has passed (the thread escalated to humans and lock holders); null otherwise."`

	// Who set the state of record (RecordSetBy, with its origin) and who
	// confirmed it (RecordConfirmedBy: the setter itself for a human's or
	// lock holder's mark), labelled as events label actors. The web UI
	// shows them; the protocol's Thread shape has no such keys, so they are
	// not on the wire.
	RecordSetBy       string `json:"-"`
	RecordOrigin      string `json:"-"`
	RecordConfirmedBy string `json:"-"`

	// DueAt is the open turn's deadline (the reply_by of the ask that
	// opened it, guard profile), before and after it passes; nil when the
	// turn has none. The wire shape says only overdue_since; the web UI
	// shows "due in 40 min" ahead of it.
	DueAt *time.Time `json:"-"`
}

// Message is a stored envelope. Replies is set only by read_thread.
type Message struct {
	ID         string      `json:"id"`
	Parley     string      `json:"parley"`
	Kind       Kind        `json:"kind"`
	Thread     string      `json:"thread"`
	Parent     *string     `json:"parent" jsonschema:"nullable"`
	From       OwnedAuthor `json:"from"`
	AuthorKind AuthorKind  `json:"author_kind"`
	Body       string      `json:"body"`
	Provenance *Provenance `json:"provenance" jsonschema:"nullable"`
	To         *Address    `json:"to,omitempty"`
	State      State       `json:"state,omitempty"`
	Awaiting   *Awaiting   `json:"awaiting" jsonschema:"nullable"`
	CreatedAt  time.Time   `json:"created_at"`
	Claim      *string     `json:"claim,omitempty" jsonschema_description:"A dialectic act's claim: the one an assert made, or the one an attest, refute or verify acted on."`
	ReplyBy    *time.Time  `json:"reply_by,omitempty" jsonschema_description:"Guard profile: an ask's deadline for the turn it opened."`
	Replies    []*Message  `json:"replies,omitzero"`
}

// Event is one entry of the log: a thread's state change, confirmation or
// withdrawal, a claim's status change, or an escalation (guard profile).
//
// Reading: §8.1's Event names no claim; a claim event carries `claim`, the
// claim whose status changed, since its message does not always say which
// (an assert supersedes claims other than its own). For an escalate event
// see guardOrigin.
type Event struct {
	ID          string      `json:"id"`
	Thread      string      `json:"thread"`
	Type        EventType   `json:"type" jsonschema:"enum=state,enum=confirm,enum=withdraw,enum=claim,enum=escalate" jsonschema_description:"escalate (guard profile): an ask's reply_by passed while its turn was open; actor is the party awaited, message the ask, origin and label \"guard\"."`
	FromState   *EventState `json:"from_state" jsonschema:"nullable"`
	ToState     EventState  `json:"to_state"`
	Origin      string      `json:"origin"`
	Label       string      `json:"label"`
	Actor       Author      `json:"actor"`
	Message     *string     `json:"message" jsonschema:"nullable"`
	At          time.Time   `json:"at"`
	ConfirmedAt *time.Time  `json:"confirmed_at" jsonschema:"nullable"`
	Claim       *string     `json:"claim,omitempty" jsonschema_description:"For a claim event: the claim whose status changed."`

	position int64 // its log position, for streams
}

// EventType is what an event records (docs/protocol.md §8.1, §10, §14).
type EventType string

// The event types.
const (
	EventTypeState    EventType = "state"    // a thread's state changed, confirmed or proposed
	EventTypeConfirm  EventType = "confirm"  // a pending proposal was confirmed
	EventTypeWithdraw EventType = "withdraw" // a pending proposal was withdrawn
	EventTypeClaim    EventType = "claim"    // a claim's status changed (dialectic profile)
	EventTypeEscalate EventType = "escalate" // an ask's reply_by passed with its turn open (guard profile)
)

// EventState is what an event's from_state and to_state hold: a thread
// state, or for a claim event a claim status as stored (never expired).
type EventState string

// JSONSchema lists the seven states and the stored claim statuses.
func (EventState) JSONSchema() *jsonschema.Schema {
	s := State("").JSONSchema()
	for _, c := range ClaimStatuses {
		if c.Status != Expired {
			s.Enum = append(s.Enum, string(c.Status))
		}
	}
	return s
}

// titleChars is how much of the root message a thread's title keeps.
const titleChars = 80

func titleOf(body string) string {
	if utf8.RuneCountInString(body) <= titleChars {
		return body
	}
	return string([]rune(body)[:titleChars])
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func awaitingOf(identity, extension string) *Awaiting {
	if identity == "" {
		return nil
	}
	return &Awaiting{Identity: identity, Extension: optional(extension)}
}

// threadShape shapes a thread as read at now: whether the guard holds it
// and whether its open turn is overdue are computed, not stored.
func (f *Forum) threadShape(th models.Thread, now time.Time) Thread {
	out := Thread{
		ID:               ThreadKey(th.ID),
		Title:            th.Title,
		State:            State(th.State),
		StateOrigin:      th.StateOrigin,
		StateConfirmedAt: utc(th.StateConfirmedAt),
		Confirmed:        th.StateConfirmedAt != nil,
		StateOfRecord:    State(th.RecordState),
		StateLabel:       th.StateLabel,
		Awaiting:         awaitingOf(th.AwaitingIdentity, th.AwaitingExtension),
		CreatedBy:        Author{Identity: th.CreatedByIdentity, Extension: optional(th.CreatedByExtension)},
		CreatedAt:        th.CreatedAt.UTC(),
		UpdatedAt:        th.UpdatedAt.UTC(),
		MessageCount:     th.MessageCount,

		RecordSetBy:       th.RecordLabel,
		RecordOrigin:      th.RecordOrigin,
		RecordConfirmedBy: th.RecordConfirmedBy,

		OverdueSince: overdueSince(th, now),
		DueAt:        utc(th.ReplyBy),
		Guard:        GuardActive,
	}
	if f.paused(th) {
		out.Guard = GuardPaused
	}
	return out
}

// The values of the Thread shape's guard (docs/protocol.md §8.1, errata 2).
const (
	GuardActive = "active"
	GuardPaused = "paused"
)

func messageShape(m models.Message) *Message {
	out := &Message{
		ID:     MessageKey(m.ID),
		Parley: "1",
		Kind:   Kind(m.Kind),
		Thread: ThreadKey(m.ThreadID),
		From: OwnedAuthor{Author: Author{Identity: m.AuthorIdentity, Extension: optional(m.AuthorExtension), Badge: m.AuthorBadge},
			Owner: shownOwner(m.AuthorOwner, m.AuthorIdentity, m.AuthorKind)},
		AuthorKind: AuthorKind(m.AuthorKind),
		Body:       m.Body,
		State:      State(m.State),
		Awaiting:   awaitingOf(m.AwaitingIdentity, m.AwaitingExtension),
		CreatedAt:  m.CreatedAt.UTC(),
	}
	if m.ParentID != nil {
		out.Parent = optional(MessageKey(*m.ParentID))
	}
	if m.ProvenanceModel != "" || m.ProvenanceClient != "" {
		out.Provenance = &Provenance{Model: m.ProvenanceModel, Client: m.ProvenanceClient}
	}
	if m.ToIdentity != "" {
		out.To = &Address{Identity: m.ToIdentity, Extension: m.ToExtension}
	}
	if m.ClaimID != nil {
		out.Claim = optional(ClaimKey(*m.ClaimID))
	}
	out.ReplyBy = utc(m.ReplyBy)
	return out
}

func eventShape(e models.Event) Event {
	out := Event{
		position:    e.Seq,
		ID:          EventKey(e.ID),
		Thread:      ThreadKey(e.ThreadID),
		Type:        EventType(e.Type),
		ToState:     EventState(e.ToState),
		Origin:      e.Origin,
		Label:       e.Label,
		Actor:       Author{Identity: e.ActorIdentity, Extension: optional(e.ActorExtension)},
		At:          e.At.UTC(),
		ConfirmedAt: utc(e.ConfirmedAt),
	}
	if e.FromState != "" {
		from := EventState(e.FromState)
		out.FromState = &from
	}
	if e.MessageID != nil {
		out.Message = optional(MessageKey(*e.MessageID))
	}
	if e.ClaimID != nil {
		out.Claim = optional(ClaimKey(*e.ClaimID))
	}
	return out
}
