package services

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// Idempotent posts (docs/protocol.md §3, errata 2). A post that carries an
// idempotency_key the same caller used in the last IdempotencyWindow
// stores nothing new: it answers the first post's stored answer again,
// with Replayed set, whatever the thread did since. Under the same key,
// another envelope is refused idempotency_key_reused.
//
// The scope of a key is the token (docs/protocol.md §3: "unique per
// token"). Reading: a browser session has no token (Caller.TokenID 0); its
// keys are scoped by its identity, the human, across that human's
// sessions.
//
// The same envelope: two envelopes are the same when they decode to the
// same Envelope, the key aside (envelopeHash). What counts is what the
// server reads, not how the client spelled it: JSON key order and
// whitespace, "th_7" or 7 or "7", an absent field or its allowed null,
// parley "1" or no parley, the server-set fields a client may echo (id,
// from.identity, created_at …) and the same instant written in another
// zone all make no difference; every value the server reads does, the
// body to the byte, and evidence and supersedes in their order.
//
// Reading: a refused post stores nothing, its key included, so a retry of
// a refused post is checked afresh (and may then succeed). A retry is a
// post: it must pass the checks that need no storage (the token's right,
// the envelope's form) before its key is looked up, so an assert whose
// valid_until, or an ask whose reply_by, has passed since the first post
// is refused invalid_body rather than replayed.

// IdempotencyWindow is how long a key stays bound to its first post.
const IdempotencyWindow = 24 * time.Hour

// idempotencyKeyMax is the longest key, in characters.
const idempotencyKeyMax = 64

// validIdempotencyKey checks 1–64 characters of [A-Za-z0-9._:-].
func validIdempotencyKey(k string) bool {
	if k == "" || len(k) > idempotencyKeyMax {
		return false
	}
	for _, r := range k {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == ':' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

func badIdempotencyKey(what string) *Refusal {
	return Refuse(InvalidBody, "%s 1 to %d characters of A-Z, a-z, 0-9, '.', '_', ':' and '-', unique for each post you send", what, idempotencyKeyMax).On("idempotency_key")
}

// withHeaderKey applies the HTTP binding's Idempotency-Key header ("" when
// absent) to a parsed envelope: the header is the same thing as the body's
// idempotency_key (docs/protocol.md §3); given both, they must be equal,
// else invalid_body.
//
// Reading: an empty header is no header.
func withHeaderKey(env *Envelope, header string) error {
	if header == "" {
		return nil
	}
	if !validIdempotencyKey(header) {
		return badIdempotencyKey("the Idempotency-Key header must be")
	}
	if env.IdempotencyKey != "" && env.IdempotencyKey != header {
		return Refuse(InvalidBody, "the Idempotency-Key header and the body's idempotency_key differ; send one of them, or both equal").On("idempotency_key")
	}
	env.IdempotencyKey = header
	return nil
}

// envelopeHash is the canonical digest of what an envelope says: the
// sha256 of the JSON of the decoded Envelope without its key. Go encodes a
// struct's fields in their declared order, times in RFC 3339 (the parser
// keeps them in UTC, to the microsecond) and lists in their order, so
// equal envelopes give equal bytes. The "v1:" prefix names this encoding:
// a change of Envelope that could change the digest of an old envelope
// must change it.
func envelopeHash(env Envelope) string {
	env.IdempotencyKey = ""
	raw, err := json.Marshal(env)
	if err != nil {
		panic(fmt.Sprintf("envelope hash: %v", err)) // an Envelope is plain values
	}
	sum := sha256.Sum256(raw)
	return "v1:" + hex.EncodeToString(sum[:])
}

// keyScope is who a key belongs to: the token, or for a browser session
// (token 0) its identity.
type keyScope struct {
	tokenID  int64
	identity string
}

func scopeOf(who Caller) keyScope {
	if who.TokenID != 0 {
		return keyScope{tokenID: who.TokenID}
	}
	return keyScope{identity: who.Identity}
}

// storedKey is a key's row: the first post's envelope digest and answer.
type storedKey struct {
	hash      string
	result    string
	createdAt time.Time
}

// replay answers a post whose key is stored and alive: the first answer
// again for the same envelope, idempotency_key_reused for another.
func replay(prior storedKey, env Envelope) (Posted, error) {
	if prior.hash != envelopeHash(env) {
		return Posted{}, Refuse(IdempotencyKeyReused,
			"idempotency_key %q was used at %s for a different envelope; use a new key for a new post, the same envelope to retry",
			env.IdempotencyKey, prior.createdAt.UTC().Format(time.RFC3339)).On("idempotency_key")
	}
	var out Posted
	if err := json.Unmarshal([]byte(prior.result), &out); err != nil {
		return Posted{}, fmt.Errorf("replay %q: %w", env.IdempotencyKey, err)
	}
	out.Replayed = true
	return out, nil
}

// expired reports whether a key stored at created no longer binds at now.
func expired(created, now time.Time) bool { return !now.Before(created.Add(IdempotencyWindow)) }
