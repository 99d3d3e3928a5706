package mcp_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"parley/internal/testkit"
	"parley/migrations/dbtest"
	"parley/services"
)

// TestTypeScriptSDKClient runs the official TypeScript SDK, pinned in
// package.json, against the real server: an independent client, validating
// our output schemas as strictly as any client will.
func TestTypeScriptSDKClient(t *testing.T) {
	if _, err := os.Stat("../node_modules/@modelcontextprotocol/sdk"); err != nil {
		testkit.Missing(t, "the TypeScript MCP SDK tests", "node_modules lacks @modelcontextprotocol/sdk (run npm ci)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH")
	}
	srv := start(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	mod := srv.token(t, "mod", services.RightRead, services.RightWrite, services.RightLock)
	revoked := srv.token(t, "gone")
	for _, tok := range must(srv.forum.ListTokens(t.Context())) {
		if tok.Identity == "ainotes:gone" {
			srv.forum.RevokeToken(t.Context(), tok.ID)
		}
	}
	cmd := exec.Command(node, "tsclient/session.mjs", srv.base+"/mcp", srv.token(t, "alice"), srv.token(t, "bob"), mod, revoked)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "session complete") {
		t.Fatalf("TypeScript SDK session failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestTypeScriptSDKProgress is the errata's scenario (docs/protocol.md §13,
// errata 2) with the official SDK, at the real interval: a 25 s inbox wait
// survives a 12 s request timeout because the client resets it on
// progress, while the same call without resetTimeoutOnProgress times out
// (tsclient/progress.mjs). It takes the 25 s of its wait.
func TestTypeScriptSDKProgress(t *testing.T) {
	if _, err := os.Stat("../node_modules/@modelcontextprotocol/sdk"); err != nil {
		testkit.Missing(t, "the TypeScript MCP SDK tests", "node_modules lacks @modelcontextprotocol/sdk (run npm ci)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH")
	}
	srv := start(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	out, err := exec.Command(node, "tsclient/progress.mjs", srv.base+"/mcp", srv.token(t, "alice")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "progress complete") {
		t.Fatalf("TypeScript SDK progress failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
