// Package services is Parley's only package with rules. It implements the
// protocol of docs/protocol.md §3–§9 — the envelope, the nine acts, the thread
// state machine, proposals and confirmation, authority, identities and
// extensions, reading, and limits — the dialectic profile of §10
// (claims, evidence, the certainty ladder: claims.go, claim_acts.go,
// evidence.go, dialectic.go) and the guard profile of §14 (duplicate
// bodies, runaway chains and threads: guard.go; reply-by deadlines and
// their escalation: deadlines.go; its manifest entry: guard_manifest.go)
// over GORM, on PostgreSQL or SQLite. Beyond the protocol's text it
// defines the search operation (search.go: the databases' full-text
// indexes, the query read the same way for both in search_terms.go,
// text-only snippets in search_snippet.go), and moves a whole forum between
// databases as a bundle (store_bundle.go and its _export and _import).
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
// The file names show the layers of the package. A file without a prefix
// holds protocol rules and the operations built on them: the envelope, the
// acts and states, post and its checks, authority, claims and the
// profiles, refusals, the wire shapes and the manifest. store_* files hold
// the storage mechanics beneath them: statements scanned by hand
// (store_rows.go), pgx batches (store_pgx.go, store_thread_rows.go), log
// positions and the horizon (store_positions.go), thread locks
// (store_locks.go), admission in one statement (store_admit_pg.go), the
// hub and PostgreSQL's notifications that wake waiting reads, query plans,
// the benchmark seed and the bundles. ui_* files support the web UI and
// its operators beyond the protocol: sessions and sign-in, flashes,
// visits, token pages, the claim board, the moderators' queue, the Overdue
// page, a thread's page and its live updates. Tests follow their subject's
// name.
//
// Readings of docs/protocol.md where the text leaves room are written down where
// they are implemented; search for "Reading:".
package services
