// Package web is Parley's Fiber application: the HTTP/JSON binding of
// PARLEY.md §2.1 (and, later, the HTML pages for humans and the MCP
// endpoint). It decodes requests, calls one services method, and encodes
// the result; it decides nothing. Every error becomes the refusal object of
// §2.2 in one place (errors.go).
package web
