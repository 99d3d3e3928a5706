package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parley/internal/testkit"
)

// rawCase is one request written byte for byte to the running server, and
// what must come back.
type rawCase struct {
	name    string
	request string // %TOKEN% is replaced by a valid bearer token
	status  int
	reason  string // "" for a success
	field   string
	jsonRPC bool // /mcp: a JSON-RPC answer
}

func malformedCorpus() []rawCase {
	const post = "POST /api/v1/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %TOKEN%\r\nContent-Type: application/json\r\n"
	body := func(b string) string { return post + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(b)) + b }
	mcpPost := func(b string) string {
		return "POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %TOKEN%\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
			fmt.Sprintf("Content-Length: %d\r\n\r\n", len(b)) + b
	}
	mcpCall := func(args string) string {
		return mcpPost(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"post","arguments":` + args + `}}`)
	}
	return []rawCase{
		{"a well-formed post", body(`{"kind":"ask","body":"Which port?"}`), 201, "", "", false},
		{"bad Content-Length", post + "Content-Length: abc\r\n\r\n{}", 400, "invalid_body", "", false},
		{"negative Content-Length", post + "Content-Length: -5\r\n\r\n{}", 400, "invalid_body", "", false},
		{"bad chunking", post + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", 400, "invalid_body", "", false},
		{"oversized header", post + "X-Filler: " + strings.Repeat("a", 9000) + "\r\nContent-Length: 2\r\n\r\n{}", 431, "invalid_body", "", false},
		{"oversized URL", "GET /api/v1/threads?cursor=" + strings.Repeat("c", 9000) + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %TOKEN%\r\n\r\n", 431, "invalid_body", "", false},
		{"body over request_max_bytes", post + "Content-Length: 20000\r\n\r\n" + strings.Repeat(" ", 20000), 413, "invalid_body", "", false},
		{"multipart", post[:strings.Index(post, "Content-Type")] + "Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 40\r\n\r\n--b\r\nContent-Disposition: form-data\r\n\r\n--b--", 400, "invalid_body", "", false},
		{"unknown method", "BREW /api/v1/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %TOKEN%\r\n\r\n", 400, "invalid_body", "path", false},
		{"garbage request line", "HELLO THERE\r\nAuthorization: Bearer %TOKEN%\r\n\r\n", 400, "invalid_body", "path", false},
		{"duplicate kind", body(`{"kind":"note","kind":"ask","body":"x"}`), 400, "invalid_body", "kind", false},
		{"duplicate nested key", body(`{"kind":"ask","body":"x","provenance":{"model":"a","model":"b"}}`), 400, "invalid_body", "provenance.model", false},
		{"invalid UTF-8", body("{\"kind\":\"ask\",\"body\":\"caf\xe9\"}"), 400, "invalid_body", "body", false},
		{"lone surrogate", body(`{"kind":"ask","body":"\udc00"}`), 400, "invalid_body", "body", false},
		{"null body", body(`{"kind":"ask","body":null}`), 400, "invalid_body", "body", false},
		{"MCP: duplicate kind is a tool refusal", mcpCall(`{"kind":"note","kind":"ask","body":"x"}`), 200, "invalid_body", "kind", true},
		{"MCP: invalid UTF-8 is a tool refusal", mcpCall("{\"kind\":\"ask\",\"body\":\"caf\xe9\"}"), 200, "invalid_body", "body", true},
		// Unreadable headers leave no route to go by: the refusal object.
		{"MCP: bad Content-Length", "POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %TOKEN%\r\nContent-Length: x\r\n\r\n{}", 400, "invalid_body", "", false},
		// Past request_max_bytes a tool call is still read, and refused as
		// a tool result the agent can act on; past the transport's cap it
		// is not read, and the answer is a JSON-RPC error all the same.
		{"MCP: a tool call over request_max_bytes", mcpCall(`{"kind":"ask","body":"` + strings.Repeat("x", 20000) + `"}`), 200, "invalid_body", "body", true},
		{"MCP: past the transport's cap", "POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %TOKEN%\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n" + strings.Repeat(" ", 2000000), 413, "invalid_body", "", true},
		{"MCP: chunked past the transport's cap", "POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %TOKEN%\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(strings.Repeat(" ", 2000000)), 413, "invalid_body", "", true},
		{"MCP: a revoked token", strings.Replace(mcpCall(`{}`), "%TOKEN%", "prl_00_00", 1), 401, "token_invalid", "", true},
		{"MCP: a batch", mcpPost(`[{"jsonrpc":"2.0","id":7,"method":"tools/list"}]`), 400, "", "", true},
		{"MCP: unknown method", "BREW /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %TOKEN%\r\n\r\n", 405, "", "", true},
		{"MCP: GET", "GET /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %TOKEN%\r\n\r\n", 405, "", "", true},
	}
}

// chunked encodes body in chunks of 64 KiB.
func chunked(body string) string {
	var b strings.Builder
	for len(body) > 0 {
		n := min(len(body), 64<<10)
		fmt.Fprintf(&b, "%x\r\n%s\r\n", n, body[:n])
		body = body[n:]
	}
	return b.String() + "0\r\n\r\n"
}

// TestMalformedRequests writes each request of the corpus to the real
// server over TCP. Every answer under /api/ is the refusal object with the
// HTTP status in it, every answer at /mcp is JSON-RPC, no answer echoes
// the request (the bearer token above all), and the server never fails.
func TestMalformedRequests(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "parley.db")
	token := agentTokens(t, db, 1)[0]
	p := startServe(t, db, nil)
	for _, c := range malformedCorpus() {
		t.Run(c.name, func(t *testing.T) {
			resp, raw := rawRequest(t, p.Addr, strings.ReplaceAll(c.request, "%TOKEN%", token))
			if strings.Contains(string(raw), token) || strings.Contains(string(raw), "Bearer") {
				t.Fatalf("the answer echoes the request:\n%s", raw)
			}
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, raw)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("Content-Type %q: %s", ct, raw)
			}
			var out map[string]any
			if err := json.Unmarshal(raw, &out); err != nil {
				t.Fatalf("not JSON: %s", raw)
			}
			refusal := out["error"]
			if c.jsonRPC {
				if out["jsonrpc"] != "2.0" {
					t.Fatalf("not a JSON-RPC answer: %s", raw)
				}
				if res, ok := out["result"].(map[string]any); ok {
					if res["isError"] != true {
						t.Fatalf("tool result without isError: %s", raw)
					}
					refusal = testkit.Dig(res, "structuredContent", "error")
				} else {
					refusal = testkit.Dig(out, "error", "data", "error")
				}
			}
			if c.reason == "" {
				if refusal != nil {
					t.Fatalf("refused: %s", raw)
				}
				return
			}
			r, _ := refusal.(map[string]any)
			if r["reason"] != c.reason || r["field"] != nilIfEmpty(c.field) {
				t.Fatalf("refusal %v, want reason %s field %q: %s", r, c.reason, c.field, raw)
			}
			if !c.jsonRPC && r["status"] != float64(resp.StatusCode) {
				t.Fatalf("the object's status %v is not the HTTP status %d", r["status"], resp.StatusCode)
			}
		})
	}
	if !p.Alive() || strings.Contains(p.Stderr.String(), "status=500") {
		t.Fatalf("the corpus hurt the server:\n%s", p.Tail())
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// rawRequest writes req on a new connection and reads one answer.
func rawRequest(t *testing.T, addr, req string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no HTTP answer: %v", err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, raw
}

// TestSignInRedirectsStayOnSite signs in with hostile next= values: the
// answer is a redirect to a path on this site, with no header planted.
func TestSignInRedirectsStayOnSite(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "parley.db")
	ok(t, parley(t, nil, "", "migrate", "--db", db))
	ok(t, parley(t, []string{"PARLEY_PASSWORD=correct horse battery"}, "", "user", "add", "ada", "--db", db))
	p := startServe(t, db, nil)
	cases := map[string]string{
		"/threads/th_1":                      "/threads/th_1",
		"/threads?state=open&x=1":            "/threads?state=open&x=1",
		"/x\r\nSet-Cookie: pwn=1":            "/threads",
		"/x\nSet-Cookie: pwn=1":              "/threads",
		"/\t/evil.example":                   "/threads",
		"//evil.example/":                    "/threads",
		"/\\evil.example":                    "/%5Cevil.example",
		"https://evil.example/":              "/threads",
		"javascript:alert(1)":                "/threads",
		"/%2F%2Fevil.example":                "/%2F%2Fevil.example",
		"/ok?next=%0D%0ASet-Cookie:%20pwn=1": "/ok?next=%0D%0ASet-Cookie%3A+pwn%3D1",
	}
	for next, want := range cases {
		jar, _ := cookiejar.New(nil)
		client := &http.Client{Jar: jar, Timeout: 5 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		form, err := client.Get(p.URL("/signin?next=" + url.QueryEscape(next)))
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(form.Body)
		form.Body.Close()
		csrf := between(string(page), `name="_csrf" value="`, `"`)
		resp, err := client.PostForm(p.URL("/signin"), url.Values{"_csrf": {csrf}, "name": {"ada"}, "password": {"correct horse battery"}, "next": {next}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
			t.Errorf("next=%q: %d Location %q, want %q", next, resp.StatusCode, resp.Header.Get("Location"), want)
		}
		for _, c := range resp.Cookies() {
			if c.Name == "pwn" {
				t.Errorf("next=%q planted a cookie", next)
			}
		}
	}
}

func between(s, start, end string) string {
	_, after, _ := strings.Cut(s, start)
	v, _, _ := strings.Cut(after, end)
	return v
}
