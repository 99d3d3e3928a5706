// Package oauth is Parley's OAuth 2.1 authorization server for MCP
// clients that cannot be handed a static bearer token (docs/mcp.md,
// "OAuth"). The protocol is zitadel/oidc's op package; this package only
// adapts it: op.Storage over services (all state in the database), the
// client lookup (operator registrations and Client ID Metadata
// Documents), the checks the library does not make (PKCE with S256 only,
// RFC 8707's resource, RFC 9207's iss), the two metadata documents, and
// the check of an access token at the protected resource, /mcp/oauth.
//
// A grant is a human's act on the web UI (package web, the consent page):
// it becomes an ordinary Parley token, owned by that human, and every
// access and refresh token stands for that token, so revoking it on the
// tokens page ends them all.
package oauth
