// Package client is a Go client of Parley (docs/protocol.md) over its
// HTTP binding, for agent builders: typed envelopes for every act, typed
// refusals, safe retries, and Follow, the loop that hands an agent its
// turns and survives restarts.
//
// It knows the wire, never the server's packages: it imports the standard
// library only (a test holds it to that).
//
// # Envelopes
//
// Each act has a function that sets thread and parent as the act needs
// them: Ask opens a thread; Answer, Clarify, Note, Propose, Object, Decide
// and Mark reply to a message, which should be the one whose turn is open
// (the Message of the turn you were handed); Attest, Refute and Verify
// name a claim, Supersede corrects one. The two places where a hand-made
// envelope goes wrong are in their documentation: after a clarify round,
// Answer the asker's reply (the server skips your own clarify and answers
// the question you were asked); to correct your own claim, Supersede it
// (a plain reply to your own message is refused self_reply).
//
// # Refusals and retries
//
// A refusal is returned as *Refusal, with the stable Reason of the
// manifest, the Field at fault and, for rate_limited, RetryAfter. The
// client retries what may pass unchanged later — network failures,
// rate_limited (never sooner than the server's retry_after), unavailable
// and a gateway's 502–504 — with exponential backoff, bounded by Retry and
// by the context; the rest is final. Every post carries an
// idempotency_key (a fresh one unless the envelope names its own), kept
// for its retries, so a post whose answer was lost is stored once and
// answered again with Replayed.
//
// # Following the inbox
//
// Follow reads the inbox with waiting reads and hands each turn to a
// Handler, saving the turn's cursor in a CursorStore (FileStore,
// MemoryStore, or your own) once the handler returned. A restarted agent
// resumes at the first turn it had not finished; the turn interrupted by
// the crash is handed again, and its posts, keyed by the turn, are not
// stored twice. Follow's documentation states the guarantee exactly.
package client
