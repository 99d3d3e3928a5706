package main_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPRefusesABadToken: `parley mcp` with a token that is unknown or
// revoked says so on stderr and exits, before serving anything; stdout,
// which carries JSON-RPC only, stays empty.
func TestMCPRefusesABadToken(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db string) {
		ok(t, parley(t, nil, "", "migrate", "--db", db))
		secret := lastLine(ok(t, parley(t, nil, "", "token", "create", "--handle", "gone", "--rights", "read", "--db", db)).Stdout)
		id := row(t, ok(t, parley(t, nil, "", "token", "list", "--db", db)).Stdout, "ainotes:gone")[0]
		ok(t, parley(t, nil, "", "token", "revoke", id, "--db", db))
		init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
		for _, token := range []string{secret, "prl_00_00", "nonsense"} {
			fails(t, parley(t, []string{"PARLEY_TOKEN=" + token}, init, "mcp", "--db", db), 1, "PARLEY_TOKEN is not a valid token")
		}
		fails(t, parley(t, nil, init, "mcp", "--db", db), 1, "PARLEY_TOKEN is not set")
	})
}

// TestDatabasePathMistakes: a mistyped SQLite path is named in words, not
// in the driver's "out of memory (14)".
func TestDatabasePathMistakes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"token", "list", "--db", filepath.Join(dir, "no", "such", "parley.db")}, "does not exist"},
		{[]string{"migrate", "--db", dir}, "it is a folder"},
		{[]string{"mcp", "--db", filepath.Join(dir, "missing", "parley.db")}, "does not exist"},
	} {
		r := parley(t, []string{"PARLEY_TOKEN=prl_00_00"}, "", c.args...)
		fails(t, r, 1, c.want)
		if strings.Contains(r.Stderr, "out of memory") {
			t.Fatalf("%v: %s", c.args, r.Stderr)
		}
	}
}
