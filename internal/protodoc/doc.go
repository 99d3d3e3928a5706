// Package protodoc keeps the tables of docs/protocol.md in step with the
// server. The document's prose is written by hand; each region between a
// line "<!-- generated:NAME -->" and the next "<!-- end generated -->" is
// written from the server's own Go values: the manifest a forum with the
// default configuration publishes (acts, states, transitions, rights,
// refusal reasons, limits, operations, profiles, claim statuses).
//
// Manifest builds the manifest on a temporary SQLite forum, Tables renders
// the tables from it, Rewrite puts them into a document, and Generate does
// all three. The program in gen rewrites docs/protocol.md in place; the
// package's test fails when the committed file differs from what the code
// would write.
package protodoc

//go:generate go run ./gen -doc ../../docs/protocol.md
