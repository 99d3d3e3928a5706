package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"parley/migrations"
	"parley/migrations/dbtest"
	"parley/models"
	"parley/services"
)

// exchange is the session every client runs: list the tools, read the
// manifest, ask with one token, answer with another, decide, and read a
// refusal from structuredContent.
func exchange(t *testing.T, alice, bob *client.Client) {
	t.Helper()
	tools, err := alice.ListTools(context.Background(), mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.OutputSchema.Type == "" && tl.RawOutputSchema == nil {
			t.Errorf("tool %s has no output schema", tl.Name)
		}
	}
	// A model holding read and write sees every tool but confirm.
	for _, op := range services.MCPOperations() {
		if slices.Contains(names, op.MCPTool) != (op.Name != "confirm") {
			t.Fatalf("tools %v: %s listed or missing wrongly", names, op.MCPTool)
		}
	}
	failed, manifest := callTool(t, alice, "get_manifest", nil)
	if failed || manifest["parley"] != "1" {
		t.Fatalf("get_manifest: %v", manifest)
	}
	_, asked := callTool(t, alice, "post", map[string]any{"kind": "ask", "body": "Which port?"})
	th := asked["thread"].(map[string]any)["id"].(string)
	if failed, _ := callTool(t, bob, "post", map[string]any{"kind": "answer", "thread": th, "body": "8443"}); failed {
		t.Fatal("answer refused")
	}
	_, inbox := callTool(t, alice, "inbox", nil)
	if items := inbox["items"].([]any); len(items) != 1 {
		t.Fatalf("alice's inbox: %v", inbox)
	}
	failed, decided := callTool(t, alice, "post", map[string]any{"kind": "decide", "thread": th, "body": "8443 it is"})
	if failed || decided["thread"].(map[string]any)["state"] != "decided" {
		t.Fatalf("decide: %v", decided)
	}
	failed, refusal := callTool(t, bob, "post", map[string]any{"kind": "mark", "thread": th, "state": "closed", "body": "mine"})
	if !failed || reasonOf(refusal) != string(services.ThreadAuthorityMissing) {
		t.Fatalf("want a thread_authority_missing refusal, got %v", refusal)
	}
}

func TestMCPGoClientOverStreamableHTTP(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		srv := start(t, db, services.Config{})
		url := srv.base + "/mcp"
		alice := httpClient(t, url, srv.token(t, "alice"))
		bob := httpClient(t, url, srv.token(t, "bob"))
		exchange(t, alice, bob)
	})
}

// TestProtocolVersions: the versions current clients negotiate are each
// accepted and answered in kind.
func TestProtocolVersions(t *testing.T) {
	srv := start(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	token := srv.token(t, "alice")
	for _, version := range []string{mcpgo.ProtocolVersion20250326, mcpgo.ProtocolVersion20250618, mcpgo.ProtocolVersion20251125} {
		t.Run(version, func(t *testing.T) {
			headers := map[string]string{"Authorization": "Bearer " + token}
			c := newHTTPClient(t, srv.base+"/mcp", headers, client.WithProtocolVersion(version))
			res := initialize(t, c)
			if res.ProtocolVersion != version {
				t.Fatalf("negotiated %s, want %s", res.ProtocolVersion, version)
			}
			if failed, me := callTool(t, c, "whoami", nil); failed || me["identity"] != "ainotes:alice" {
				t.Fatalf("whoami over %s: %v", version, me)
			}
		})
	}
}

// TestMCPGoClientOverStdio runs `parley mcp` as a desktop client would:
// a child process speaking JSON-RPC on stdin and stdout.
func TestMCPGoClientOverStdio(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "parley")
	build := exec.Command("go", "build", "-o", bin, "../cmd/parley")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			url := dbtest.EmptyURL(t, dialect)
			db, err := models.Open(url)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := migrations.Up(context.Background(), db); err != nil {
				t.Fatal(err)
			}
			forum := services.New(db, services.Config{})
			srv := server{forum: forum}
			stdio := func(token string) *client.Client {
				env := append(os.Environ(), "PARLEY_TOKEN="+token, "PARLEY_DATABASE_URL="+url)
				c, err := client.NewStdioMCPClient(bin, env, "mcp")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				res, err := c.Initialize(context.Background(), mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
					ClientInfo: mcpgo.Implementation{Name: "parley-test", Version: "1"},
				}})
				if err != nil {
					t.Fatalf("initialize over stdio: %v", err)
				}
				if res.Instructions == "" {
					t.Fatal("no server instructions")
				}
				return c
			}
			exchange(t, stdio(srv.token(t, "alice")), stdio(srv.token(t, "bob")))
		})
	}
}
