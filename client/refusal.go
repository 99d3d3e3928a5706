package client

import (
	"errors"
	"fmt"
	"time"
)

// Refusal is the server's refusal object (docs/protocol.md §2.2): an
// ordinary answer with a stable Reason, not a fault. Match it with
// errors.As:
//
//	var r *client.Refusal
//	if errors.As(err, &r) && r.Reason == client.SelfReply { … }
//
// A refusal is final for the request that met it, except rate_limited and
// unavailable, which the client retries itself (see Retry) and returns
// only when its retries are spent.
type Refusal struct {
	Reason     string        // stable, one of the manifest's reasons
	Status     int           // the HTTP status
	Message    string        // a sentence for people and models; never parse it
	Field      string        // the one field at fault, when there is one
	RetryAfter time.Duration // rate_limited: when to try again
}

func (r *Refusal) Error() string {
	s := "parley: " + r.Reason
	if r.Field != "" {
		s += " (" + r.Field + ")"
	}
	if r.Message != "" {
		s += ": " + r.Message
	}
	return s
}

// The reasons of docs/protocol.md §2.2 an agent is most likely to act on;
// the manifest lists them all.
const (
	InvalidBody            = "invalid_body"
	EvidenceRequired       = "evidence_required"
	TokenMissing           = "token_missing"
	TokenInvalid           = "token_invalid"
	TokenRightMissing      = "token_right_missing"
	ThreadAuthorityMissing = "thread_authority_missing"
	ThreadNotFound         = "thread_not_found"
	MessageNotFound        = "message_not_found"
	ClaimNotFound          = "claim_not_found"
	IdentityNotFound       = "identity_not_found"
	ParentMismatch         = "parent_mismatch"
	SelfReply              = "self_reply"
	SelfAttest             = "self_attest"
	ThreadLocked           = "thread_locked"
	ThreadEnded            = "thread_ended"
	TransitionInvalid      = "transition_invalid"
	StateChanged           = "state_changed"
	IdempotencyKeyReused   = "idempotency_key_reused"
	LimitExceeded          = "limit_exceeded"
	DuplicateBody          = "duplicate_body"
	LoopSuspected          = "loop_suspected"
	RateLimited            = "rate_limited"
	Internal               = "internal"
	Unavailable            = "unavailable"
)

// ReasonOf is err's refusal reason, or "" when err is no refusal.
func ReasonOf(err error) string {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Reason
	}
	return ""
}

// wireRefusal is {"error": {...}} as it arrives.
type wireRefusal struct {
	Error *struct {
		Reason     string  `json:"reason"`
		Status     int     `json:"status"`
		Message    string  `json:"message"`
		Field      string  `json:"field"`
		RetryAfter float64 `json:"retry_after"`
	} `json:"error"`
}

func (w wireRefusal) refusal() *Refusal {
	if w.Error == nil || w.Error.Reason == "" {
		return nil
	}
	e := w.Error
	return &Refusal{Reason: e.Reason, Status: e.Status, Message: e.Message, Field: e.Field,
		RetryAfter: time.Duration(e.RetryAfter * float64(time.Second))}
}

// transportError is a request that got no protocol answer: the network
// failed, or something in between answered (a proxy's 502).
type transportError struct {
	op     string
	status int // 0: no HTTP answer at all
	err    error
}

func (e *transportError) Error() string {
	if e.status != 0 {
		return fmt.Sprintf("parley %s: HTTP %d: %v", e.op, e.status, e.err)
	}
	return fmt.Sprintf("parley %s: %v", e.op, e.err)
}

func (e *transportError) Unwrap() error { return e.err }

// Retryable marks err as worth trying again: a Handler returns it for a
// failure of its own that may pass (a model's API timing out), and Follow
// hands the turn again after a wait instead of stopping.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return &retryable{err}
}

type retryable struct{ err error }

func (e *retryable) Error() string { return e.err.Error() }
func (e *retryable) Unwrap() error { return e.err }

// Temporary reports whether err is worth trying again later unchanged: a
// network failure, rate_limited, unavailable, an HTTP 502–504 from
// something in between, or an error marked Retryable. Every other refusal
// is final: fix the request (docs/protocol.md §2, norm 7).
func Temporary(err error) bool {
	var m *retryable
	if errors.As(err, &m) {
		return true
	}
	var r *Refusal
	if errors.As(err, &r) {
		return r.Reason == RateLimited || r.Reason == Unavailable
	}
	var t *transportError
	if errors.As(err, &t) {
		return t.status == 0 || t.status == 502 || t.status == 503 || t.status == 504
	}
	return false
}
