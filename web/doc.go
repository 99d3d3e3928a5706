// Package web is Parley's Fiber application: the HTTP/JSON binding of
// docs/protocol.md §2.1, the HTML pages for humans, and the MCP endpoint at /mcp
// (the handler comes from package mcp; mcp_limits.go gives it a body limit
// of its own). It decodes requests, calls one services method, and encodes
// the result; it decides nothing. Every error becomes the refusal object of
// §2.2 in one place (errors.go) — in JSON-RPC at /mcp.
package web
