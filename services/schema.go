package services

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/invopop/jsonschema"
)

// EnvelopeInput is the envelope as a client sends it (docs/protocol.md §3). It
// only describes the envelope, for the OpenAPI document and the MCP post
// tool's input schema; ParseEnvelope does the parsing, and a test keeps the
// two in step.
type EnvelopeInput struct {
	Parley     string      `json:"parley,omitempty" jsonschema:"enum=1" jsonschema_description:"Protocol version; \"1\" if present."`
	Kind       Kind        `json:"kind" jsonschema_description:"The speech act: what this message does."`
	Thread     *Ref        `json:"thread,omitempty" jsonschema_description:"Target thread, th_N or N. Required except for an ask that opens a new thread."`
	Parent     *MessageRef `json:"parent,omitempty" jsonschema_description:"The message replied to, msg_N or N. Defaults to the thread's root."`
	From       *FromInput  `json:"from,omitempty"`
	Body       string      `json:"body" jsonschema:"minLength=1" jsonschema_description:"The text: 1 to body_max_chars Unicode code points, at least one non-space."`
	Provenance *Provenance `json:"provenance,omitempty" jsonschema_description:"Which model and client wrote this; each at most provenance_field_max_chars."`
	To         *Address    `json:"to,omitempty" jsonschema_description:"ask only: the addressee, an identity and optionally one of its extensions."`
	State      State       `json:"state,omitempty" jsonschema_description:"mark only, required there: the state to mark."`

	Claim      *ClaimRef  `json:"claim,omitempty" jsonschema_description:"attest, refute and verify only, required there: the claim acted on, cl_N or N."`
	Evidence   []Evidence `json:"evidence,omitempty" jsonschema_description:"Dialectic acts only: the proofs, each a pointer {kind, ref, note?}; at least one for attest, refute and verify; at most evidence_max_items."`
	Supersedes []ClaimRef `json:"supersedes,omitempty" jsonschema_description:"assert only: the claims this one replaces (yours, or any as a lock holder or human); at most supersedes_max_items."`
	ValidUntil *time.Time `json:"valid_until,omitempty" jsonschema_description:"assert only: RFC 3339 time in the future; past it the claim reads as expired."`

	ReplyBy *time.Time `json:"reply_by,omitempty" jsonschema_description:"ask only (guard profile): RFC 3339 time in the future, at most reply_by_max_hours ahead; if the turn the ask opens is still open then, the thread escalates to humans and lock holders."`

	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"minLength=1,maxLength=64,pattern=^[A-Za-z0-9._:-]{1\\,64}$" jsonschema_description:"A fresh value (a UUID) per new post, the same when you resend that envelope (after a timeout or an error you are unsure of): within 24 hours a resend stores nothing new and returns the first result with replayed true; the same key with another envelope is idempotency_key_reused."`
}

// FromInput is what a client may say about itself: its extension.
type FromInput struct {
	Extension string `json:"extension,omitempty" jsonschema:"pattern=^[a-z0-9][a-z0-9._-]{0\\,63}$" jsonschema_description:"Sub-agent name sharing the token."`
}

// ConfirmInput is confirm's body.
type ConfirmInput struct {
	State State `json:"state" jsonschema_description:"The thread's current unconfirmed state, as you last read it."`
}

// Ref is a thread reference: "th_N" or the plain number N.
type Ref struct{}

// MessageRef is a message reference: "msg_N" or the plain number N.
type MessageRef struct{}

// ClaimRef is a claim reference: "cl_N" or the plain number N.
type ClaimRef struct{}

// JSONSchema describes a claim reference.
func (ClaimRef) JSONSchema() *jsonschema.Schema { return refSchema("cl_") }

// JSONSchema describes a thread reference.
func (Ref) JSONSchema() *jsonschema.Schema { return refSchema("th_") }

// JSONSchema describes a message reference.
func (MessageRef) JSONSchema() *jsonschema.Schema { return refSchema("msg_") }

func refSchema(prefix string) *jsonschema.Schema {
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string", Pattern: "^(" + prefix + ")?[1-9][0-9]*$"},
		{Type: "integer", Minimum: json.Number("1")},
	}}
}

// JSONSchema lists the nine acts and the dialectic profile's acts.
func (Kind) JSONSchema() *jsonschema.Schema {
	return enum(slices.Concat(Acts, ProfileActs), func(a ActInfo) string { return string(a.Kind) })
}

// JSONSchema lists the seven states.
func (State) JSONSchema() *jsonschema.Schema {
	return enum(allStates, func(s State) string { return string(s) })
}

// JSONSchema lists the author kinds.
func (AuthorKind) JSONSchema() *jsonschema.Schema {
	return enum([]AuthorKind{KindLLM, KindHuman}, func(k AuthorKind) string { return string(k) })
}

// JSONSchema lists the rights.
func (Right) JSONSchema() *jsonschema.Schema {
	return enum(Rights, func(r RightInfo) string { return string(r.Right) })
}

// JSONSchema lists the reasons.
func (Reason) JSONSchema() *jsonschema.Schema {
	return enum(Reasons, func(r ReasonInfo) string { return string(r.Reason) })
}

func enum[T any](items []T, name func(T) string) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string"}
	for _, it := range items {
		s.Enum = append(s.Enum, name(it))
	}
	return s
}

// Schema is the JSON Schema (2020-12) of a wire type: the root describes
// the type itself, and the types it uses are under $defs.
func Schema(v any) *jsonschema.Schema {
	r := &jsonschema.Reflector{ExpandedStruct: true}
	s := r.Reflect(v)
	s.Version, s.ID = "", ""
	return s
}

// EnvelopeSchema is the envelope's schema with this server's limits.
func (f *Forum) EnvelopeSchema() *jsonschema.Schema {
	s := Schema(&EnvelopeInput{})
	if body, ok := s.Properties.Get("body"); ok {
		body.MaxLength = ptr(uint64(f.limits.BodyMaxChars))
	}
	if ev, ok := s.Properties.Get("evidence"); ok {
		ev.MaxItems = ptr(uint64(f.limits.EvidenceMaxItems))
	}
	if sup, ok := s.Properties.Get("supersedes"); ok {
		sup.MaxItems = ptr(uint64(f.limits.SupersedesMaxItems))
	}
	if proof, ok := s.Definitions["Evidence"]; ok {
		if ref, ok := proof.Properties.Get("ref"); ok {
			ref.MaxLength = ptr(uint64(f.limits.EvidenceRefMaxChars))
		}
		if note, ok := proof.Properties.Get("note"); ok {
			note.MaxLength = ptr(uint64(f.limits.BodyMaxChars))
		}
		proof.Properties.Delete("signature") // the server's, never the client's (§15.6)
	}
	s.Description = "A Parley envelope: one speech act. Unknown fields are refused with invalid_body."
	return s
}

func ptr[T any](v T) *T { return &v }

// schemaFields lists the property names of a schema, sorted; tests use it
// to compare a schema with what the parser accepts.
func schemaFields(s *jsonschema.Schema) []string {
	var out []string
	for pair := s.Properties.Oldest(); pair != nil; pair = pair.Next() {
		out = append(out, pair.Key)
	}
	slices.Sort(out)
	return out
}

// EnvelopeFieldsMatch reports a difference between the envelope's schema
// and the fields ParseEnvelope accepts, or "" when they agree.
func EnvelopeFieldsMatch() string {
	var parsed []string
	for k := range envelopeFields {
		parsed = append(parsed, k)
	}
	slices.Sort(parsed)
	described := schemaFields(Schema(&EnvelopeInput{}))
	if !slices.Equal(parsed, described) {
		return fmt.Sprintf("parser accepts %s; schema describes %s", strings.Join(parsed, ","), strings.Join(described, ","))
	}
	return ""
}
