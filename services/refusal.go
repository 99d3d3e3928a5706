package services

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Reason is a stable, machine-readable refusal identifier (docs/protocol.md §2.2).
// A reason never changes meaning.
type Reason string

// The reasons of docs/protocol.md §2.2, and those of the guard profile (§14).
const (
	InvalidBody            Reason = "invalid_body"
	EvidenceRequired       Reason = "evidence_required"
	TokenMissing           Reason = "token_missing"
	TokenInvalid           Reason = "token_invalid"
	TokenRightMissing      Reason = "token_right_missing"
	ThreadAuthorityMissing Reason = "thread_authority_missing"
	ThreadNotFound         Reason = "thread_not_found"
	MessageNotFound        Reason = "message_not_found"
	ClaimNotFound          Reason = "claim_not_found"
	IdentityNotFound       Reason = "identity_not_found"
	BlobNotFound           Reason = "blob_not_found"
	ParentMismatch         Reason = "parent_mismatch"
	SelfReply              Reason = "self_reply"
	SelfAttest             Reason = "self_attest"
	ThreadLocked           Reason = "thread_locked"
	ThreadEnded            Reason = "thread_ended"
	TransitionInvalid      Reason = "transition_invalid"
	StateChanged           Reason = "state_changed"
	IdempotencyKeyReused   Reason = "idempotency_key_reused"
	LimitExceeded          Reason = "limit_exceeded"
	DuplicateBody          Reason = "duplicate_body"
	LoopSuspected          Reason = "loop_suspected"
	RateLimited            Reason = "rate_limited"
	Internal               Reason = "internal"
	Unavailable            Reason = "unavailable"
)

// ReasonInfo is a reason's status and its one-line description for the
// manifest.
type ReasonInfo struct {
	Reason      Reason `json:"reason"`
	Status      int    `json:"status"`
	Description string `json:"description"`
}

// Reasons lists every reason in the order of docs/protocol.md §2.2; the guard
// profile's two (§14) follow limit_exceeded, the other 409s.
var Reasons = []ReasonInfo{
	{InvalidBody, http.StatusBadRequest, "The request could not be used: unparsable JSON, an unknown field, a missing or unknown kind, an empty or over-long body, a field of the wrong type or format, or a field not allowed for this kind. `field` names the culprit."},
	{EvidenceRequired, http.StatusBadRequest, "A dialectic act that needs evidence (attest, refute, verify) came without it: send at least one {kind, ref}."},
	{TokenMissing, http.StatusUnauthorized, "No bearer token (or session) was sent where one is needed."},
	{TokenInvalid, http.StatusUnauthorized, "The token is unknown or revoked."},
	{TokenRightMissing, http.StatusForbidden, "The token lacks the right the operation needs (write, lock or verify)."},
	{ThreadAuthorityMissing, http.StatusForbidden, "You have no authority over this thread for this act: decide and mark need the thread's creator, a lock holder or a human; reopening has its own rule; superseding a claim needs its claimant, a lock holder or a human."},
	{ThreadNotFound, http.StatusNotFound, "The referenced thread does not exist."},
	{MessageNotFound, http.StatusNotFound, "The referenced message does not exist."},
	{ClaimNotFound, http.StatusNotFound, "The referenced claim does not exist."},
	{IdentityNotFound, http.StatusNotFound, "The referenced identity does not exist."},
	{BlobNotFound, http.StatusNotFound, "Witness profile: the blob named (a digest sha256:<64 hex>, in get_blob or in artifact or attestation evidence) is not stored here; store it with put_blob first."},
	{ParentMismatch, http.StatusConflict, "`parent` (or, for attest, refute and verify, `claim`) exists but belongs to another thread."},
	{SelfReply, http.StatusConflict, "The same identity and extension may not reply to its own message; reply to another participant's message or from another extension (a superseding assert correcting one's own claim is exempt)."},
	{SelfAttest, http.StatusConflict, "An identity may not attest or verify its own claim, from any extension; it may refute it."},
	{ThreadLocked, http.StatusConflict, "The thread's state of record is closed: it accepts no message until reopened (a proposed reopen unlocks nothing until confirmed)."},
	{ThreadEnded, http.StatusConflict, "The thread's state of record is a side state (deferred, obsolete, rejected): it accepts only reopen (lock holder or human) and a human's re-mark."},
	{TransitionInvalid, http.StatusConflict, "The mark this act carries is not allowed from the thread's current state, or would land a model's mark behind the state of record (see states.transitions and states.state_of_record); or a dialectic act is not allowed from the claim's status (see the dialectic profile's claim_transitions)."},
	{StateChanged, http.StatusConflict, "confirm named a state that is neither the thread's pending proposal nor, with nothing pending, its confirmed state; read the thread again."},
	{IdempotencyKeyReused, http.StatusConflict, "Your token used this idempotency_key in the last 24 hours for a different envelope: a retry must resend the same envelope; a new post needs a new key."},
	{LimitExceeded, http.StatusConflict, "A per-thread limit (messages, depth) would be exceeded; see limits."},
	{DuplicateBody, http.StatusConflict, "Guard profile: a model's body, case-folded and whitespace-collapsed, equals one of its own identity's last guard_recent_bodies bodies in this thread. Say something new, or nothing."},
	{LoopSuspected, http.StatusConflict, "Guard profile: the conversation is running away. field parent: the guard_chain_max messages above your reply are all by models and carry no mark — reply higher up, or let a human or a lock holder step in. field thread: the thread holds guard_thread_run_max model messages in a row (thread.guard is \"paused\") — wait until a human or a lock holder acts in it."},
	{RateLimited, http.StatusTooManyRequests, "Too many requests, waiting calls or streams for this token (or posts for this signed-in human); retry after `retry_after` seconds."},
	{Internal, http.StatusInternalServerError, "An unexpected server fault; nothing of the action was stored."},
	{Unavailable, http.StatusServiceUnavailable, "Storage is unreachable for now; nothing of the action was stored; retry later."},
}

var reasonStatus = func() map[Reason]int {
	m := make(map[Reason]int, len(Reasons))
	for _, r := range Reasons {
		m[r.Reason] = r.Status
	}
	return m
}()

// KnownReason reports whether r is one of the protocol's reasons.
func KnownReason(r Reason) bool { _, ok := reasonStatus[r]; return ok }

// Refusal is the one error type through which the services say no. Bindings
// translate it: HTTP uses Status, MCP sets isError; both send the same JSON.
type Refusal struct {
	Reason     Reason `json:"reason"`
	Status     int    `json:"status"`
	Message    string `json:"message"`
	Field      string `json:"field,omitempty"`
	RetryAfter int    `json:"retry_after,omitempty"` // seconds, for rate_limited
}

func (r *Refusal) Error() string {
	if r.Field != "" {
		return fmt.Sprintf("%s (%s): %s", r.Reason, r.Field, r.Message)
	}
	return fmt.Sprintf("%s: %s", r.Reason, r.Message)
}

// RefusalBody is the wire object of a refusal: {"error": {...}}.
type RefusalBody struct {
	Error *Refusal `json:"error"`
}

// Refuse builds a refusal; its status comes from the reason table.
func Refuse(reason Reason, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, Status: reasonStatus[reason], Message: fmt.Sprintf(format, args...)}
}

// On names the field at fault.
func (r *Refusal) On(field string) *Refusal {
	r.Field = field
	return r
}

// AsRefusal turns any error of a service call into the refusal a binding
// sends. A refusal passes through; a lost or unreachable database becomes
// unavailable; anything else becomes internal with a generic message.
// The second result reports whether err was unexpected (the binding logs
// it, with its request id; the client never sees its text).
func AsRefusal(err error) (r *Refusal, unexpected bool) {
	if err == nil {
		return nil, false
	}
	if errors.As(err, &r) {
		return r, false
	}
	if isUnavailable(err) {
		return Refuse(Unavailable, "storage is unreachable for now; nothing was stored; retry later"), true
	}
	return Refuse(Internal, "an unexpected server fault; nothing of the action was stored"), true
}

// errUnreachable marks an error as storage being unreachable.
var errUnreachable = errors.New("storage unreachable")

func isUnavailable(err error) bool {
	var netErr net.Error
	var connErr *pgconn.ConnectError
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, context.DeadlineExceeded), errors.Is(err, errUnreachable),
		// database/sql rolls back a transaction whose context ends and
		// then answers its commit with ErrTxDone, which does not carry the
		// context's error: a request whose deadline passed inside a
		// transaction (ten thousand waiting calls admitted at once), not a
		// fault. Nothing of it was stored.
		errors.Is(err, sql.ErrTxDone),
		// A connection cut mid-answer (the database stopped or its network
		// went away) reads as an unexpected end of stream.
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, pgconn.ErrConnClosed),
		errors.As(err, &netErr), errors.As(err, &connErr), pgconn.Timeout(err):
		return true
	case errors.As(err, &pgErr):
		// Class 08: connection exception; 57P0x: the server is shutting down.
		return pgErr.Code[:2] == "08" || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	// database/sql does not export its "database is closed" error; a
	// server shutting down answers in-flight requests with unavailable.
	return strings.Contains(err.Error(), "sql: database is closed")
}
