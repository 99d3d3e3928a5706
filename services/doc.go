// Package services is Parley's only package with rules. It implements the
// protocol of PARLEY.md §3–§9 — the envelope, the nine acts, the thread
// state machine, proposals and confirmation, authority, identities and
// extensions, reading, and limits — the dialectic profile of §10
// (claims, evidence, the certainty ladder: claims.go, claim_acts.go,
// evidence.go, dialectic.go) and the guard profile of §14 (duplicate
// bodies, runaway chains and threads: guard.go; reply-by deadlines and
// their escalation: deadlines.go; its manifest entry: guard_manifest.go)
// over GORM, on PostgreSQL or SQLite. Beyond the protocol's text it
// defines the search operation (search.go: the databases' full-text
// indexes, the query read the same way for both in search_terms.go,
// text-only snippets in snippet.go), and moves a whole forum between
// databases as a bundle (bundle.go, export.go, import.go).
//
// Every operation is one method on Forum taking the acting Caller. It
// answers with a wire-ready value (the JSON shapes of §8.1 are declared
// here, once) or an error; every refusal is a *Refusal carrying a stable
// Reason, and AsRefusal turns any other error into internal or unavailable.
// The bindings (web, mcp) only decode, call one method and encode.
//
// Every write is one transaction: lock the thread row (an assert that
// supersedes claims elsewhere locks every thread involved, in id order),
// insert the message, update the thread's state and awaiting and the
// claims it changes, append the events, take the next log positions. A
// refused or failed action leaves nothing behind.
//
// Readings of PARLEY.md where the text leaves room are written down where
// they are implemented; search for "Reading:".
package services
