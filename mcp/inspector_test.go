package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/internal/testkit"
	"parley/migrations"
	"parley/migrations/dbtest"
	"parley/models"
	"parley/services"
)

// inspectorBin is the MCP Inspector's command line, pinned in package.json.
const inspectorBin = "../node_modules/.bin/mcp-inspector"

// inspector runs the MCP Inspector CLI (a client independent of this code
// and of mcp-go) with args after --cli, in a home of its own so that it
// keeps no state between runs. It returns the exit code, the JSON on
// stdout (its result, or the tool result of a refused call) and stderr.
func inspector(t *testing.T, args ...string) (int, map[string]any, string) {
	t.Helper()
	// A bound for a hang only: on a loaded machine Node takes its time to
	// load the Inspector.
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, inspectorBin, append([]string{"--cli", "--format", "json", "-q", "--stored-auth-only"}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+home, "MCP_CATALOG_PATH="+filepath.Join(home, "mcp.json"), "MCP_CLIENT_CONFIG_PATH="+filepath.Join(home, "client.json"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("inspector %v: still running after 3 minutes: %v\n%s", args, err, stderr.Bytes())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("inspector %v: %v", args, err)
	}
	var out map[string]any
	if stdout.Len() > 0 {
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("inspector %v: stdout is not JSON: %s", args, stdout.Bytes())
		}
	}
	return cmd.ProcessState.ExitCode(), out, stderr.String()
}

func needInspector(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(inspectorBin); err != nil {
		testkit.Missing(t, "the MCP Inspector tests", "node_modules lacks the Inspector (run npm ci)")
	}
}

// TestMCPInspectorOverStreamableHTTP: the Inspector calls every tool as the
// agents of a conversation would, then sends an oversized post and a
// revoked token, and each answer is what the protocol says.
func TestMCPInspectorOverStreamableHTTP(t *testing.T) {
	needInspector(t)
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		srv := start(t, db, services.Config{})
		url := srv.base + "/mcp"
		alice, bob := srv.token(t, "alice"), srv.token(t, "bob")
		mod := srv.token(t, "mod", services.RightRead, services.RightWrite, services.RightLock)
		revoked := srv.token(t, "gone")
		for _, tok := range must(srv.forum.ListTokens(t.Context())) {
			if tok.Identity == "ainotes:gone" {
				srv.forum.RevokeToken(t.Context(), tok.ID)
			}
		}
		as := func(token string) []string {
			if token == "" {
				return []string{url}
			}
			return []string{url, "--header", "Authorization: Bearer " + token}
		}
		call := func(token, tool string, args map[string]any) (bool, map[string]any) {
			t.Helper()
			if args == nil {
				args = map[string]any{}
			}
			raw, _ := json.Marshal(args)
			code, out, stderr := inspector(t, append(as(token), "--method", "tools/call", "--tool-name", tool, "--tool-args-json", string(raw))...)
			res, _ := out["result"].(map[string]any)
			failed := res["isError"] == true
			if res == nil || failed != (code != 0) {
				t.Fatalf("%s: exit %d, %v\n%s", tool, code, out, stderr)
			}
			sc, _ := res["structuredContent"].(map[string]any)
			return failed, sc
		}
		ok := func(token, tool string, args map[string]any, path []any, want any) map[string]any {
			t.Helper()
			failed, sc := call(token, tool, args)
			if failed || (path != nil && dig(sc, path...) != want) {
				t.Fatalf("%s %v: %v, want %v = %v", tool, args, sc, path, want)
			}
			return sc
		}

		code, out, stderr := inspector(t, append(as(bob), "--method", "tools/list", "--strict")...)
		if code != 0 {
			t.Fatalf("tools/list --strict: exit %d (a schema portability error?)\n%s", code, stderr)
		}
		var names []string
		for _, tl := range dig(out, "result", "tools").([]any) {
			names = append(names, dig(tl, "name").(string))
		}
		if slices.Contains(names, "confirm") || len(names) != len(services.MCPOperations())-1 {
			t.Fatalf("a writer's tools: %v", names)
		}

		ok("", "get_manifest", nil, []any{"parley"}, "1")
		ok(alice, "whoami", nil, []any{"inbox", "count"}, float64(0))
		asked := ok(alice, "post", map[string]any{"kind": "ask", "body": "Which port should the service use?", "to": map[string]any{"identity": "ainotes:bob"}}, []any{"thread", "state"}, "open")
		th, root := dig(asked, "thread", "id").(string), dig(asked, "message", "id").(string)
		ok(bob, "list_identities", nil, []any{"identities", 0, "identity"}, "ainotes:alice")
		ok(bob, "inbox", nil, []any{"items", 0, "message", "id"}, root)
		ok(bob, "post", map[string]any{"kind": "answer", "thread": th, "parent": root, "body": "8443."}, []any{"thread", "state"}, "answered")
		ok(bob, "read_thread", map[string]any{"thread": th, "branch": root, "depth": 2}, []any{"messages", 0, "id"}, root)
		ok(alice, "post", map[string]any{"kind": "decide", "thread": th, "body": "8443 it is."}, []any{"thread", "confirmed"}, false)
		ok(mod, "list_threads", map[string]any{"confirmed": false}, []any{"threads", 0, "id"}, th)
		ok(mod, "confirm", map[string]any{"thread": th, "state": "decided"}, []any{"thread", "confirmed"}, true)
		ok(mod, "confirm", map[string]any{"thread": th, "state": "decided"}, []any{"thread", "state_of_record"}, "decided")
		ok(bob, "get_events", map[string]any{"thread": th}, []any{"events", 3, "type"}, "confirm")
		claim := ok(alice, "post", map[string]any{"kind": "assert", "body": "p99 stays under 40 ms.", "evidence": []any{map[string]any{"kind": "url", "ref": "https://ci.example/1"}}}, []any{"claim", "status"}, "unverified")
		ok(bob, "get_claim", map[string]any{"claim": dig(claim, "claim", "id")}, []any{"claim", "status"}, "unverified")
		ok(bob, "list_claims", map[string]any{"status": "unverified"}, []any{"claims", 0, "id"}, dig(claim, "claim", "id"))

		// A tool the token may not call is not listed to it, and the
		// Inspector, which checks the list, does not even send the call.
		code, _, stderr = inspector(t, append(as(bob), "--method", "tools/call", "--tool-name", "confirm", "--tool-args-json", `{"thread":"th_1","state":"decided"}`)...)
		if code == 0 || !strings.Contains(stderr, "tool_not_found") {
			t.Fatalf("confirm without lock: exit %d\n%s", code, stderr)
		}
		// Refusals come back as tool results the agent can act on.
		failed, sc := call(alice, "post", map[string]any{"kind": "note", "thread": th, "body": strings.Repeat("x", 20000)})
		if !failed || dig(sc, "error", "reason") != "invalid_body" || dig(sc, "error", "field") != "body" || dig(sc, "error", "status") != float64(413) {
			t.Fatalf("an oversized post: %v", sc)
		}
		// A revoked token is refused at the door: the Inspector reports the
		// 401 and the refusal object in it.
		code, _, stderr = inspector(t, append(as(revoked), "--method", "tools/list")...)
		if code == 0 || !strings.Contains(stderr, "token_invalid") {
			t.Fatalf("a revoked token: exit %d\n%s", code, stderr)
		}
	})
}

// TestMCPInspectorOverStdio: the Inspector runs `parley mcp` as a desktop
// client would; a revoked PARLEY_TOKEN stops the command before it serves.
func TestMCPInspectorOverStdio(t *testing.T) {
	needInspector(t)
	bin := filepath.Join(t.TempDir(), "parley")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/parley").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	url := dbtest.EmptyURL(t, "sqlite")
	db, err := models.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrations.Up(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	srv := server{forum: services.New(db, services.Config{})}
	alice, gone := srv.token(t, "alice"), srv.token(t, "gone")
	for _, tok := range must(srv.forum.ListTokens(t.Context())) {
		if tok.Identity == "ainotes:gone" {
			srv.forum.RevokeToken(t.Context(), tok.ID)
		}
	}
	stdio := func(token string, args ...string) (int, map[string]any, string) {
		return inspector(t, append([]string{"-e", "PARLEY_TOKEN=" + token, "-e", "PARLEY_DATABASE_URL=" + url, bin, "mcp"}, args...)...)
	}
	code, out, stderr := stdio(alice, "--method", "tools/call", "--tool-name", "whoami")
	if code != 0 || dig(out, "result", "structuredContent", "identity") != "ainotes:alice" {
		t.Fatalf("whoami over stdio: exit %d %v\n%s", code, out, stderr)
	}
	code, out, _ = stdio(alice, "--method", "tools/call", "--tool-name", "post", "--tool-args-json", `{"kind":"ask","body":"`+strings.Repeat("x", 20000)+`"}`)
	if code == 0 || dig(out, "result", "structuredContent", "error", "field") != "body" {
		t.Fatalf("an oversized post over stdio: exit %d %v", code, out)
	}
	if code, _, stderr = stdio(gone, "--method", "tools/list"); code == 0 {
		t.Fatalf("a revoked PARLEY_TOKEN served: %s", stderr)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
