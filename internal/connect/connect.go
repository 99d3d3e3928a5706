// Package connect writes the configurations that connect an MCP client to
// Parley, filled in: for Claude Code, Claude Desktop, VS Code, Cursor,
// Codex CLI and curl. The tokens page shows them for a token just created
// and for OAuth; docs/mcp.md shows the same (TestConnectSnippets holds
// both to a running server).
//
// The Streamable HTTP forms come first: they work against a remote server
// and put no database credentials on the desktop. The stdio form needs the
// binary and the database where the client runs.
package connect

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Snippet is one configuration, as a person pastes it.
type Snippet struct {
	ID     string // stable, for the page and the tests
	Client string // who reads it
	Where  string // the file, command line or screen it goes to
	Lang   string // sh, json or toml
	Text   string
}

// Placeholders the stdio form cannot know: where the binary and the
// database are on the desktop.
const (
	BinaryPlaceholder   = "/path/to/parley"
	DatabasePlaceholder = "/path/to/parley.db"
	// MCPRemote is the stdio-to-HTTP bridge Claude Desktop's file runs
	// for a remote server, pinned.
	MCPRemote = "mcp-remote@0.15.1"
)

// httpEntry and stdioEntry are a client's server entry, their fields in
// the order people read them.
type httpEntry struct {
	Type    string            `json:"type,omitempty"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
}

type stdioEntry struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

func servers(key string, entry any) string {
	return jsonText(map[string]any{key: map[string]any{"parley": entry}})
}

func jsonText(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ForToken are the configurations for a static token at url, the /mcp
// endpoint (https://host/mcp).
func ForToken(url, token string) []Snippet {
	auth := "Bearer " + token
	headers := map[string]string{"Authorization": auth}
	return []Snippet{
		{ID: "claude-code", Client: "Claude Code", Where: "a terminal", Lang: "sh",
			Text: fmt.Sprintf("claude mcp add --transport http parley %s --header %s", shellQuote(url), shellQuote("Authorization: "+auth))},
		{ID: "claude-code-json", Client: "Claude Code", Where: ".mcp.json in the project", Lang: "json",
			Text: servers("mcpServers", httpEntry{Type: "http", URL: url, Headers: headers})},
		{ID: "vscode", Client: "VS Code", Where: ".vscode/mcp.json", Lang: "json",
			Text: servers("servers", httpEntry{Type: "http", URL: url, Headers: headers})},
		{ID: "cursor", Client: "Cursor", Where: ".cursor/mcp.json (or ~/.cursor/mcp.json)", Lang: "json",
			Text: servers("mcpServers", httpEntry{URL: url, Headers: headers})},
		{ID: "codex", Client: "Codex CLI", Where: "~/.codex/config.toml, with PARLEY_TOKEN in the environment", Lang: "toml",
			Text: fmt.Sprintf("# export PARLEY_TOKEN=%s\n[mcp_servers.parley]\nurl = %q\nbearer_token_env_var = \"PARLEY_TOKEN\"", token, url)},
		{ID: "claude-desktop-remote", Client: "Claude Desktop (remote, through mcp-remote)", Where: "claude_desktop_config.json", Lang: "json",
			Text: servers("mcpServers", stdioEntry{Command: "npx",
				Args: []string{"-y", MCPRemote, url, "--header", "Authorization:${PARLEY_AUTH}"}, Env: map[string]string{"PARLEY_AUTH": auth}})},
		{ID: "claude-desktop-stdio", Client: "Claude Desktop (stdio, on the server's database)", Where: "claude_desktop_config.json, with absolute paths", Lang: "json",
			Text: servers("mcpServers", stdioEntry{Command: BinaryPlaceholder,
				Args: []string{"mcp", "--db", DatabasePlaceholder}, Env: map[string]string{"PARLEY_TOKEN": token}})},
		{ID: "curl", Client: "curl", Where: "a terminal", Lang: "sh",
			Text: fmt.Sprintf("curl -s -H %s -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\\n  -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}' %s",
				shellQuote("Authorization: "+auth), shellQuote(url))},
	}
}

// ForOAuth are the configurations for OAuth at url, the /mcp/oauth
// endpoint: no token to paste; the client signs in, and a human consents
// on this server's web UI.
func ForOAuth(url string) []Snippet {
	return []Snippet{
		{ID: "oauth-claude-code", Client: "Claude Code", Where: "a terminal, then /mcp in Claude Code to sign in", Lang: "sh",
			Text: fmt.Sprintf("claude mcp add --transport http parley %s", shellQuote(url))},
		{ID: "oauth-claude-code-json", Client: "Claude Code", Where: ".mcp.json in the project", Lang: "json",
			Text: servers("mcpServers", httpEntry{Type: "http", URL: url})},
		{ID: "oauth-vscode", Client: "VS Code", Where: ".vscode/mcp.json", Lang: "json",
			Text: servers("servers", httpEntry{Type: "http", URL: url})},
		{ID: "oauth-cursor", Client: "Cursor", Where: ".cursor/mcp.json", Lang: "json",
			Text: servers("mcpServers", httpEntry{URL: url})},
		{ID: "oauth-codex", Client: "Codex CLI", Where: "~/.codex/config.toml, then codex mcp login parley", Lang: "toml",
			Text: fmt.Sprintf("[mcp_servers.parley]\nurl = %q", url)},
		{ID: "oauth-connector", Client: "Claude Desktop, claude.ai and ChatGPT connectors", Where: "Settings → Connectors → add a custom connector", Lang: "text",
			Text: url},
		{ID: "oauth-curl", Client: "curl (where a client starts: the challenge)", Where: "a terminal", Lang: "sh",
			Text: fmt.Sprintf("curl -si -H 'Content-Type: application/json' -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}' %s", shellQuote(url))},
	}
}
