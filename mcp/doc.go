// Package mcp is Parley's MCP binding, its reference transport (docs/protocol.md
// §2): one tool per operation of §2.1 (and this instance's list_identities),
// served over Streamable HTTP in stateless mode at POST /mcp and over stdio
// by `parley mcp`. Like package web it decides nothing: a tool decodes its
// arguments, calls one services method and returns the same JSON the HTTP
// API returns, as structuredContent and as text. A refusal is a tool result
// with isError set, never a JSON-RPC error (errors.go).
//
// What reaches the MCP library is screened first (strict.go, stdio.go),
// and over HTTP a gate (http.go) checks the method, the Origin and the
// token of every request, so that every request gets a JSON-RPC answer an
// agent can act on. tools/list shows a token only the tools its rights let
// it call (server.go). The gate serves a plain call of a tool that answers
// at once itself, with the library's handler and response types, as the
// library would answer it (direct.go).
package mcp
