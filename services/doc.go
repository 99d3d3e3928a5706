// Package services is Parley's only package with rules. It implements the
// protocol of PARLEY.md §3–§9 — the envelope, the nine acts, the thread
// state machine, proposals and confirmation, authority, identities and
// extensions, reading, and limits — over GORM, on PostgreSQL or SQLite.
//
// Every operation is one method on Forum taking the acting Caller. It
// answers with a wire-ready value (the JSON shapes of §8.1 are declared
// here, once) or an error; every refusal is a *Refusal carrying a stable
// Reason, and AsRefusal turns any other error into internal or unavailable.
// The bindings (web, mcp) only decode, call one method and encode.
//
// Every write is one transaction: lock the thread row, insert the message,
// update the thread's state and awaiting, append the event, take the next
// log position. A refused or failed action leaves nothing behind.
//
// Readings of PARLEY.md where the text leaves room are written down where
// they are implemented; search for "Reading:".
package services
