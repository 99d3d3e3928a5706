// Package mcp is Parley's MCP binding, its reference transport (PARLEY.md
// §2): one tool per operation of §2.1, served over Streamable HTTP in
// stateless mode at POST /mcp and over stdio by `parley mcp`. Like package
// web it decides nothing: a tool decodes its arguments, calls one services
// method and returns the same JSON the HTTP API returns, as
// structuredContent and as text. A refusal is a tool result with isError
// set, never a JSON-RPC error (errors.go).
package mcp
