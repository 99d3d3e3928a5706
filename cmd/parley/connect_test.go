package main_test

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"parley/internal/connect"
	"parley/internal/testkit"
)

// TestConnectSnippets: every configuration of "Connect an agent", as the
// tokens page shows it for a token just created and for OAuth, parses
// (JSON, TOML, a shell command line) and names a URL or a command that
// answers tools/list on the running server: with the token, or, over
// OAuth, with the challenge a client starts from. docs/mcp.md shows the
// same configurations, for the default address and a placeholder token.
func TestConnectSnippets(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "parley.db")
	ok(t, parley(t, nil, "", "migrate", "--db", db))
	ok(t, parley(t, []string{"PARLEY_PASSWORD=correct horse battery"}, "", "user", "add", "ada", "--db", db))
	addr := testkit.FreeAddr(t)
	base := "http://" + addr
	testkit.Start(t, addr, binary, "serve", "--db", db, "--addr", addr, "--oauth-issuer", base)

	// The human creates a token on the tokens page, which then shows it
	// with its configurations.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	signin := get(t, browser, base+"/signin")
	form := url.Values{"_csrf": {hidden(t, signin, "_csrf")}, "name": {"ada"}, "password": {"correct horse battery"}}
	post(t, browser, base+"/signin", form)
	tokensPage := get(t, browser, base+"/tokens")
	// The form's redirect lands on the page that shows the secret, once.
	created := post(t, browser, base+"/tokens", url.Values{"_csrf": {hidden(t, tokensPage, "_csrf")}, "handle": {"wired"}, "rights": {"read", "write"}})
	secret := regexp.MustCompile(`data-testid="token-secret"[^>]*value="([^"]+)"|value="([^"]+)"[^>]*data-testid="token-secret"`).FindStringSubmatch(created)
	if secret == nil {
		t.Fatalf("no secret on the tokens page:\n%s", created)
	}
	token := secret[1] + secret[2]

	shown := snippetsOn(t, created)
	want := append(connect.ForToken(base+"/mcp", token), connect.ForOAuth(base+"/mcp/oauth")...)
	if len(shown) != len(want) {
		t.Fatalf("the page shows %d configurations, want %d", len(shown), len(want))
	}
	for _, s := range want {
		if shown[s.ID] != s.Text {
			t.Errorf("the page's %s:\n%s\nwant:\n%s", s.ID, shown[s.ID], s.Text)
		}
	}

	for _, s := range want {
		t.Run(s.ID, func(t *testing.T) { checkSnippet(t, s, base, token, db) })
	}

	doc, err := os.ReadFile("../../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(connect.ForToken("http://127.0.0.1:8080/mcp", "prl_…"), connect.ForOAuth("https://forum.example/mcp/oauth")...) {
		if !bytes.Contains(doc, []byte(s.Text)) {
			t.Errorf("docs/mcp.md lacks the %s configuration:\n%s", s.ID, s.Text)
		}
	}
}

// checkSnippet parses s and asks what it names for tools/list.
func checkSnippet(t *testing.T, s connect.Snippet, base, token, db string) {
	oauth := strings.HasPrefix(s.ID, "oauth-")
	switch s.Lang {
	case "json":
		var doc map[string]map[string]struct {
			Type    string            `json:"type"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		}
		if err := json.Unmarshal([]byte(s.Text), &doc); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, s.Text)
		}
		servers := doc["mcpServers"]
		if s.ID == "vscode" || s.ID == "oauth-vscode" {
			servers = doc["servers"]
		}
		e, found := servers["parley"]
		if !found {
			t.Fatalf("no server parley in\n%s", s.Text)
		}
		switch e.Command {
		case "":
			toolsList(t, e.URL, e.Headers["Authorization"], oauth)
		case "npx":
			// mcp-remote URL --header Authorization:${PARLEY_AUTH}
			i := slices.Index(e.Args, connect.MCPRemote)
			if i < 0 || i+3 >= len(e.Args) || e.Args[i+2] != "--header" || e.Args[i+3] != "Authorization:${PARLEY_AUTH}" {
				t.Fatalf("args %v", e.Args)
			}
			toolsList(t, e.Args[i+1], e.Env["PARLEY_AUTH"], false)
		case connect.BinaryPlaceholder:
			args := slices.Clone(e.Args)
			args[slices.Index(args, connect.DatabasePlaceholder)] = db
			stdioToolsList(t, args, e.Env)
		default:
			t.Fatalf("command %q", e.Command)
		}
	case "toml":
		var doc struct {
			MCPServers map[string]struct {
				URL               string `toml:"url"`
				BearerTokenEnvVar string `toml:"bearer_token_env_var"`
			} `toml:"mcp_servers"`
		}
		if _, err := toml.Decode(s.Text, &doc); err != nil {
			t.Fatalf("not TOML: %v\n%s", err, s.Text)
		}
		e := doc.MCPServers["parley"]
		if oauth != (e.BearerTokenEnvVar == "") || (!oauth && e.BearerTokenEnvVar != "PARLEY_TOKEN") {
			t.Fatalf("bearer_token_env_var %q", e.BearerTokenEnvVar)
		}
		auth := ""
		if !oauth {
			auth = "Bearer " + token // what the environment variable holds
		}
		toolsList(t, e.URL, auth, oauth)
	case "text":
		toolsList(t, strings.TrimSpace(s.Text), "", true)
	case "sh":
		words := shellWords(t, s.Text)
		switch words[0] {
		case "claude":
			if !slices.Equal(words[:5], []string{"claude", "mcp", "add", "--transport", "http"}) || words[5] != "parley" {
				t.Fatalf("words %q", words)
			}
			auth := ""
			if i := slices.Index(words, "--header"); i > 0 {
				auth = strings.TrimPrefix(words[i+1], "Authorization: ")
			}
			toolsList(t, words[6], auth, oauth)
		case "curl":
			out, err := exec.Command("sh", "-c", s.Text).CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if oauth {
				if !bytes.Contains(out, []byte("401")) || !bytes.Contains(out, []byte("resource_metadata=")) {
					t.Fatalf("want the 401 challenge:\n%s", out)
				}
				return
			}
			var res struct {
				Result struct{ Tools []any } `json:"result"`
			}
			if json.Unmarshal(out, &res) != nil || len(res.Result.Tools) == 0 {
				t.Fatalf("curl answered:\n%s", out)
			}
		default:
			t.Fatalf("a command of %q", words[0])
		}
	default:
		t.Fatalf("language %q", s.Lang)
	}
}

// toolsList asks url for tools/list with the Authorization header auth.
// Over OAuth, without a token, the answer is the challenge that starts a
// client's sign-in.
func toolsList(t *testing.T, u, auth string, oauth bool) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if oauth {
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") || !strings.HasSuffix(u, "/mcp/oauth") {
			t.Fatalf("%s: %d %q; want the OAuth challenge", u, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
		return
	}
	var res struct {
		Result struct{ Tools []struct{ Name string } } `json:"result"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &res) != nil || !slices.ContainsFunc(res.Result.Tools, func(x struct{ Name string }) bool { return x.Name == "post" }) {
		t.Fatalf("%s: %d %s; want tools/list with post", u, resp.StatusCode, body)
	}
}

// stdioToolsList runs the binary as the snippet says, over stdio.
func stdioToolsList(t *testing.T, args []string, env map[string]string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = testkit.CleanEnv()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`)
	out, err := cmd.Output()
	if err != nil || !bytes.Contains(out, []byte(`"name":"post"`)) {
		t.Fatalf("stdio: %v\n%s", err, out)
	}
}

// shellWords splits a command line as sh does.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	if strings.HasPrefix(line, "curl") {
		return []string{"curl"} // run as it stands (checkSnippet)
	}
	out, err := exec.Command("sh", "-c", "set -- "+line+`; printf '%s\n' "$@"`).Output()
	if err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

func get(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
	return string(b)
}

// post sends a form and follows its redirect, returning the page.
func post(t *testing.T, c *http.Client, u string, form url.Values) string {
	t.Helper()
	resp, err := c.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d", u, resp.StatusCode)
	}
	return string(b)
}

func hidden(t *testing.T, page, name string) string {
	t.Helper()
	m := regexp.MustCompile(`name="` + name + `" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no %s in the page", name)
	}
	return m[1]
}

// snippetsOn reads the configurations a page shows, by id.
func snippetsOn(t *testing.T, page string) map[string]string {
	t.Helper()
	out := map[string]string{}
	re := regexp.MustCompile(`(?s)data-snippet="([^"]+)".*?<textarea[^>]*>(.*?)</textarea>`)
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		out[m[1]] = html.UnescapeString(m[2])
	}
	return out
}

// TestOAuthClientAdd: the operator registers a client on the command
// line; a bad registration is refused, naming what is wrong.
func TestOAuthClientAdd(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "parley.db")
	ok(t, parley(t, nil, "", "migrate", "--db", db))
	r := ok(t, parley(t, nil, "", "oauth", "client", "add", "--id", "desk-app", "--name", "Desk app",
		"--redirect-uri", "http://127.0.0.1/cb", "--redirect-uri", "deskapp:/cb", "--db", db))
	if !strings.Contains(r.Stdout, "registered OAuth client desk-app") {
		t.Fatalf("stdout %q", r.Stdout)
	}
	fails(t, parley(t, nil, "", "oauth", "client", "add", "--id", "desk-app", "--db", db), 1, "at least one redirect URI")
	fails(t, parley(t, nil, "", "oauth", "client", "add", "--id", "x", "--redirect-uri", "/relative", "--db", db), 1, "not an absolute URI")
	fails(t, parley(t, nil, "", "oauth", "client", "add", "--redirect-uri", "http://127.0.0.1/cb", "--db", db), 1, "client id")
}
