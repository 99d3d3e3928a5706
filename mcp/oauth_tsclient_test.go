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

// TestTypeScriptSDKOAuth is the whole OAuth flow with a real OAuth client,
// the official TypeScript SDK's (tsclient/oauth.mjs), headless: from
// nothing to a stored post through a human's consent, then a refresh and
// the human's revocation. The grant is an ordinary token, owned by the
// human who consented.
func TestTypeScriptSDKOAuth(t *testing.T) {
	if _, err := os.Stat("../node_modules/@modelcontextprotocol/sdk"); err != nil {
		testkit.Missing(t, "the TypeScript MCP SDK tests", "node_modules lacks @modelcontextprotocol/sdk (run npm ci)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH")
	}
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			w := startOAuth(t, dbtest.Fresh(t, dialect), services.Config{})
			cmd := exec.Command(node, "tsclient/oauth.mjs", w.base, w.cookie, w.metadataURL)
			// The metadata document is served over TLS by the Go test; node
			// never fetches it, the server does.
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "oauth complete") {
				t.Fatalf("TypeScript SDK OAuth session failed: %v\n%s", err, out)
			}
			t.Logf("%s", out)
			var grant *services.TokenInfo
			for _, tok := range must(w.forum.ListTokens(t.Context())) {
				if tok.Identity == "ainotes:tsagent" {
					grant = &tok
				}
			}
			if grant == nil || grant.Owner == nil || *grant.Owner != "human:ada" || grant.RevokedAt == nil || len(grant.Rights) != 2 {
				t.Fatalf("the grant's token: %+v; want ainotes:tsagent, read and write, owned by human:ada, revoked", grant)
			}
		})
	}
}
