package services

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Envelope is a parsed, validated action (docs/protocol.md §3). The server-set
// fields are not here: the identity comes from the Caller, never the client.
type Envelope struct {
	Kind      Kind
	ThreadID  int64 // 0 when absent
	ParentID  int64 // 0 when absent: the thread's root
	Extension string
	Body      string
	Model     string // provenance.model
	Client    string // provenance.client
	To        *Address
	State     State // mark only

	// The dialectic profile's fields (docs/protocol.md §10).
	ClaimID    int64      // attest, refute, verify: the claim acted on
	Evidence   []Evidence // the proofs, in the order sent
	Supersedes []int64    // assert: the claims it replaces
	ValidUntil *time.Time // assert: when the claim stops holding

	// The guard profile's field (docs/protocol.md §14).
	ReplyBy *time.Time // ask: the deadline of the turn it opens

	// IdempotencyKey makes a retry safe (docs/protocol.md §3, errata 2):
	// the body's idempotency_key or the Idempotency-Key header, "" when
	// neither. It is no part of what the envelope says (envelopeHash).
	IdempotencyKey string
}

// Address names an identity, optionally one of its extensions.
type Address struct {
	Identity  string `json:"identity" jsonschema:"pattern=^[a-z0-9][a-z0-9._-]{0\\,63}:[a-z0-9][a-z0-9._-]{0\\,63}$" jsonschema_description:"An identity, \"<realm>:<handle>\" or \"human:<name>\"; list_identities lists them."`
	Extension string `json:"extension,omitempty" jsonschema:"pattern=^[a-z0-9][a-z0-9._-]{0\\,63}$" jsonschema_description:"One of the identity's extensions (sub-agents)."`
}

// ignoredFields are set by the server; a client that sends them changes
// nothing (docs/protocol.md §3). Reading: besides the four the protocol names, the other
// server-set fields of a message (§8.1) are ignored too, so that a client
// may echo a message it read.
var ignoredFields = map[string]bool{"id": true, "author_kind": true, "created_at": true, "awaiting": true}

var envelopeFields = map[string]bool{
	"parley": true, "kind": true, "thread": true, "parent": true, "from": true,
	"body": true, "provenance": true, "to": true, "state": true,
	"claim": true, "evidence": true, "supersedes": true, "valid_until": true,
	"reply_by": true, "idempotency_key": true,
}

// dialecticFields belong to the dialectic profile's acts only, each to
// the acts listed.
var dialecticFields = map[string][]Kind{
	"claim":       {Attest, Refute, Verify},
	"evidence":    {Assert, Attest, Refute, Verify},
	"supersedes":  {Assert},
	"valid_until": {Assert},
}

// ParseEnvelope reads a JSON envelope strictly: an unknown field, a field of
// the wrong type, a missing kind or a bad body is refused with invalid_body
// naming the field.
func (f *Forum) ParseEnvelope(raw []byte) (Envelope, error) {
	obj, err := decodeObject(raw, "", "the envelope")
	if err != nil {
		return Envelope{}, err
	}
	var env Envelope
	if err := f.readKind(obj, &env); err != nil {
		return Envelope{}, err
	}
	for _, key := range sortedKeys(obj) {
		if err := f.readField(key, obj[key], &env); err != nil {
			return Envelope{}, err
		}
	}
	if err := f.checkEnvelope(obj, &env); err != nil {
		return Envelope{}, err
	}
	return env, nil
}

func (f *Forum) readKind(obj map[string]json.RawMessage, env *Envelope) error {
	raw, ok := obj["kind"]
	if !ok || isNull(raw) {
		return Refuse(InvalidBody, "kind is required: one of %s", kindList()).On("kind")
	}
	var k string
	if stringInto(raw, &k) != nil {
		return Refuse(InvalidBody, "kind must be a string: one of %s", kindList()).On("kind")
	}
	env.Kind = Kind(k)
	if !knownKind(env.Kind) {
		return Refuse(InvalidBody, "unknown kind %q: one of %s", k, kindList()).On("kind")
	}
	return nil
}

func (f *Forum) readField(key string, raw json.RawMessage, env *Envelope) error {
	switch {
	case key == "kind" || ignoredFields[key]:
		return nil
	case dialecticFields[key] != nil && !slices.Contains(dialecticFields[key], env.Kind):
		return Refuse(InvalidBody, "%s belongs to the dialectic profile's %s, not to %s", key, kindNames(dialecticFields[key], " and "), env.Kind).On(key)
	case !envelopeFields[key]:
		return Refuse(InvalidBody, "unknown field %q: an envelope has parley, kind, thread, parent, from, body, provenance, to, state, reply_by (ask only), idempotency_key, and for the dialectic profile's acts claim, evidence, supersedes and valid_until", key).On(key)
	}
	if isNull(raw) {
		return nullField(key)
	}
	switch key {
	case "parley":
		var v string
		if stringInto(raw, &v) != nil || v != "1" {
			return Refuse(InvalidBody, `parley must be the string "1" when present`).On(key)
		}
	case "thread":
		id, ok := refFromJSON(raw, threadPrefix)
		if !ok {
			return badThreadRef(key)
		}
		env.ThreadID = id
	case "parent":
		id, ok := refFromJSON(raw, messagePrefix)
		if !ok {
			return Refuse(InvalidBody, `parent must be "msg_N" or a positive number`).On(key)
		}
		env.ParentID = id
	case "body":
		return f.readBody(raw, env)
	case "from":
		return f.readFrom(raw, env)
	case "provenance":
		return f.readProvenance(raw, env)
	case "to":
		return f.readTo(raw, env)
	case "state":
		var s string
		if stringInto(raw, &s) != nil || !ValidState(State(s)) {
			return Refuse(InvalidBody, "state must be one of %s", stateList()).On(key)
		}
		env.State = State(s)
	case "claim":
		id, ok := refFromJSON(raw, claimPrefix)
		if !ok {
			return badClaimRef(key)
		}
		env.ClaimID = id
	case "evidence":
		return f.readEvidence(raw, env)
	case "supersedes":
		return f.readSupersedes(raw, env)
	case "valid_until":
		return f.readValidUntil(raw, env)
	case "reply_by":
		return f.readReplyBy(raw, env)
	case "idempotency_key":
		var k string
		if stringInto(raw, &k) != nil || !validIdempotencyKey(k) {
			return badIdempotencyKey("idempotency_key must be")
		}
		env.IdempotencyKey = k
	}
	return nil
}

// readSupersedes reads the claims an assert replaces: distinct claim
// references, at most supersedes_max_items.
func (f *Forum) readSupersedes(raw json.RawMessage, env *Envelope) error {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return Refuse(InvalidBody, `supersedes must be a list of claims, "cl_N" or N`).On("supersedes")
	}
	if len(items) > f.limits.SupersedesMaxItems {
		return Refuse(InvalidBody, "supersedes names %d claims; at most %d (supersedes_max_items)", len(items), f.limits.SupersedesMaxItems).On("supersedes")
	}
	for _, item := range items {
		id, ok := refFromJSON(item, claimPrefix)
		if !ok {
			return badClaimRef("supersedes")
		}
		if slices.Contains(env.Supersedes, id) {
			return Refuse(InvalidBody, "supersedes names %s twice", ClaimKey(id)).On("supersedes")
		}
		env.Supersedes = append(env.Supersedes, id)
	}
	return nil
}

// readValidUntil reads when an asserted claim stops holding: an RFC 3339
// time in the future (docs/protocol.md §10).
func (f *Forum) readValidUntil(raw json.RawMessage, env *Envelope) error {
	var s string
	if stringInto(raw, &s) != nil {
		return Refuse(InvalidBody, "valid_until must be an RFC 3339 time string").On("valid_until")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return Refuse(InvalidBody, "valid_until must be an RFC 3339 time such as 2030-01-31T12:00:00Z").On("valid_until")
	}
	t = t.UTC().Truncate(time.Microsecond)
	if !t.After(f.timestamp()) {
		return Refuse(InvalidBody, "valid_until must lie in the future when the claim is asserted; it was %s", t.Format(time.RFC3339)).On("valid_until")
	}
	env.ValidUntil = &t
	return nil
}

func (f *Forum) readBody(raw json.RawMessage, env *Envelope) error {
	var body string
	if stringInto(raw, &body) != nil {
		return Refuse(InvalidBody, "body must be a string").On("body")
	}
	if err := f.checkText(body, "body", f.limits.BodyMaxChars); err != nil {
		return err
	}
	if strings.TrimFunc(body, unicode.IsSpace) == "" {
		return Refuse(InvalidBody, "body must contain at least one non-space character").On("body")
	}
	env.Body = body
	return nil
}

func (f *Forum) readFrom(raw json.RawMessage, env *Envelope) error {
	obj, err := decodeObject(raw, "from", "from")
	if err != nil {
		return err
	}
	for _, key := range sortedKeys(obj) {
		switch key {
		case "identity", "badge":
			// Set by the server from the token; ignored.
		case "extension":
			if isNull(obj[key]) {
				continue
			}
			ext, err := f.readExtension(obj[key], "from.extension")
			if err != nil {
				return err
			}
			env.Extension = ext
		default:
			return Refuse(InvalidBody, "unknown field %q in from: only extension may be sent", key).On("from." + key)
		}
	}
	return nil
}

func (f *Forum) readProvenance(raw json.RawMessage, env *Envelope) error {
	obj, err := decodeObject(raw, "provenance", "provenance")
	if err != nil {
		return err
	}
	for _, key := range sortedKeys(obj) {
		field := "provenance." + key
		if key != "model" && key != "client" {
			return Refuse(InvalidBody, "unknown field %q in provenance: only model and client", key).On(field)
		}
		var v string
		if isNull(obj[key]) || stringInto(obj[key], &v) != nil {
			return Refuse(InvalidBody, "%s must be a string", field).On(field)
		}
		if err := f.checkText(v, field, f.limits.ProvenanceFieldMaxChars); err != nil {
			return err
		}
		if key == "model" {
			env.Model = v
		} else {
			env.Client = v
		}
	}
	return nil
}

func (f *Forum) readTo(raw json.RawMessage, env *Envelope) error {
	obj, err := decodeObject(raw, "to", "to")
	if err != nil {
		return err
	}
	to := &Address{}
	for _, key := range sortedKeys(obj) {
		switch key {
		case "identity":
			if stringInto(obj[key], &to.Identity) != nil || !validIdentity(to.Identity) {
				return Refuse(InvalidBody, `to.identity must be an identity such as "%s:bob" or "human:alice"`, f.realm).On("to.identity")
			}
		case "extension":
			ext, err := f.readExtension(obj[key], "to.extension")
			if err != nil {
				return err
			}
			to.Extension = ext
		default:
			return Refuse(InvalidBody, "unknown field %q in to: only identity and extension", key).On("to." + key)
		}
	}
	if to.Identity == "" {
		return Refuse(InvalidBody, "to.identity is required when to is given").On("to.identity")
	}
	env.To = to
	return nil
}

// checkEnvelope applies the rules that tie fields to the act.
func (f *Forum) checkEnvelope(obj map[string]json.RawMessage, env *Envelope) error {
	if _, ok := obj["body"]; !ok {
		return Refuse(InvalidBody, "body is required: 1 to %d characters", f.limits.BodyMaxChars).On("body")
	}
	if env.To != nil && env.Kind != Ask {
		return Refuse(InvalidBody, "to is allowed only on ask").On("to")
	}
	if env.Kind == Mark && env.State == "" {
		return Refuse(InvalidBody, "mark needs state: one of %s", stateList()).On("state")
	}
	if env.Kind != Mark && env.State != "" {
		return Refuse(InvalidBody, "state is allowed only on mark").On("state")
	}
	if claimAct(env.Kind) && env.ClaimID == 0 {
		return Refuse(InvalidBody, "%s needs claim: the claim it acts on, \"cl_N\"", env.Kind).On("claim")
	}
	if claimAct(env.Kind) && len(env.Evidence) == 0 {
		return Refuse(EvidenceRequired, "%s needs evidence: at least one {\"kind\", \"ref\"}; a proof is a pointer, never an opinion", env.Kind).On("evidence")
	}
	if env.ThreadID == 0 && env.Kind != Ask && env.Kind != Assert {
		return Refuse(InvalidBody, "thread is required for %s; only ask and assert open a new thread", env.Kind).On("thread")
	}
	if env.ThreadID == 0 && env.ParentID != 0 {
		return Refuse(InvalidBody, "parent needs thread: a new thread has no parent").On("thread")
	}
	return nil
}

// checkText enforces a length in code points and refuses what no database
// stores as text (NUL).
func (f *Forum) checkText(s, field string, max int) error {
	if strings.ContainsRune(s, 0) {
		return Refuse(InvalidBody, "%s must not contain NUL characters", field).On(field)
	}
	if n := utf8.RuneCountInString(s); n > max {
		return Refuse(InvalidBody, "%s has %d characters; at most %d (Unicode code points)", field, n, max).On(field)
	}
	return nil
}

func (f *Forum) readExtension(raw json.RawMessage, field string) (string, error) {
	var ext string
	if stringInto(raw, &ext) != nil || !validName(ext, f.limits.ExtensionMaxChars) {
		return "", Refuse(InvalidBody, "%s must match [a-z0-9][a-z0-9._-]{0,%d}", field, f.limits.ExtensionMaxChars-1).On(field)
	}
	return ext, nil
}

// validName checks [a-z0-9][a-z0-9._-]{0,max-1}: extensions and handles.
func validName(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i, r := range s {
		alnum := r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
		if !alnum && (i == 0 || (r != '.' && r != '_' && r != '-')) {
			return false
		}
	}
	return true
}

// validIdentity checks the shape "<realm>:<handle>" or "human:<name>".
func validIdentity(s string) bool {
	realm, handle, ok := strings.Cut(s, ":")
	return ok && validName(realm, 64) && validName(handle, 64)
}

// decodeObject reads one JSON object into its raw fields: a field of the
// envelope (refusals name it), or with field "" the whole input of an
// operation, which name calls what it is.
//
// An object read in one pass (readObject) is the common case; anything
// else takes the second path below, whose only work is to word the refusal.
func decodeObject(raw []byte, field, name string) (map[string]json.RawMessage, error) {
	if obj, ok := readObject(raw); ok {
		return obj, nil
	}
	if field == "" {
		if err := CheckJSON(raw); err != nil {
			return nil, err
		}
	}
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, Refuse(InvalidBody, "%s must be a JSON object%s", name, notAnObject(raw, err)).On(field)
	}
	if dec.More() {
		return nil, Refuse(InvalidBody, "%s must hold exactly one JSON object", name).On(field)
	}
	return obj, nil
}

// notAnObject says, in words for people and models, what was sent
// instead of an object; encoding/json's own messages name Go types.
func notAnObject(raw []byte, err error) string {
	var syntax *json.SyntaxError
	switch {
	case len(bytes.TrimSpace(raw)) == 0:
		return ", and nothing was sent"
	case errors.As(err, &syntax):
		return fmt.Sprintf(", and this is not valid JSON (at byte %d)", syntax.Offset)
	case err != nil && !json.Valid(raw):
		return ", and this is not valid JSON (it ends too early)"
	}
	switch t := bytes.TrimSpace(raw); {
	case t[0] == '[':
		return ", not a list"
	case t[0] == '"':
		return ", not a string"
	case t[0] == 'n':
		return ", not null"
	case t[0] == 't' || t[0] == 'f':
		return ", not true or false"
	}
	return ", not a number"
}

// nullField answers an explicit null (docs/protocol.md §3, errata 1): null is not a
// value. Only thread, parent and to may be null, meaning absent (and
// from.extension, read with from).
func nullField(key string) error {
	switch key {
	case "thread", "parent", "to":
		return nil
	}
	return Refuse(InvalidBody, "%s must not be null: leave it out, or give it a value; only thread, parent, to and from.extension may be null", key).On(key)
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func sortedKeys(obj map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func kindList() string {
	return kindNames(actKinds(Acts), ", ") + ", or a dialectic profile act: " + kindNames(actKinds(ProfileActs), ", ")
}

func actKinds(acts []ActInfo) []Kind {
	out := make([]Kind, len(acts))
	for i, a := range acts {
		out[i] = a.Kind
	}
	return out
}

func kindNames(kinds []Kind, sep string) string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return strings.Join(names, sep)
}

func stateList() string {
	names := make([]string, len(allStates))
	for i, s := range allStates {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}
