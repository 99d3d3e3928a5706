package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"parley/internal/testkit"
	"parley/mcp"
	"parley/services"
	"parley/web"
)

// fixedClock makes two worlds produce byte-identical answers.
func fixedClock() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }

// server is the real application, MCP endpoint included, on a random port.
type server struct {
	base  string
	forum *services.Forum
}

func start(t *testing.T, db *gorm.DB, cfg services.Config) server {
	t.Helper()
	return startWith(t, db, cfg, nil)
}

// startWith is start with the MCP handler passed through wrap, when set.
func startWith(t *testing.T, db *gorm.DB, cfg services.Config, wrap func(http.Handler) http.Handler) server {
	t.Helper()
	forum := services.New(db, cfg)
	logger := slog.New(slog.DiscardHandler)
	handler := mcp.HTTPHandler(forum, logger)
	if wrap != nil {
		handler = wrap(handler)
	}
	app, err := web.New(forum, web.Options{Logger: logger, MCP: handler})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln)
	t.Cleanup(func() { app.Shutdown() })
	return server{base: "http://" + ln.Addr().String(), forum: forum}
}

func (s server) token(t *testing.T, handle string, rights ...services.Right) string {
	t.Helper()
	if len(rights) == 0 {
		rights = []services.Right{services.RightRead, services.RightWrite}
	}
	tok, err := s.forum.CreateToken(context.Background(), services.TokenRequest{Handle: handle, Rights: rights})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Secret
}

// httpClient is mcp-go's own client over Streamable HTTP, initialized.
func httpClient(t *testing.T, url, token string) *client.Client {
	t.Helper()
	headers := map[string]string{}
	if token != "" {
		headers["Authorization"] = "Bearer " + token
	}
	c := newHTTPClient(t, url, headers)
	initialize(t, c)
	return c
}

func newHTTPClient(t *testing.T, url string, headers map[string]string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	return client.NewClient(tr, opts...)
}

func initialize(t *testing.T, c *client.Client) *mcpgo.InitializeResult {
	t.Helper()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	res, err := c.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
		ClientInfo: mcpgo.Implementation{Name: "parley-test", Version: "1"},
	}})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return res
}

// callTool calls a tool and returns isError and structuredContent, after
// checking that the text content carries the same JSON.
func callTool(t *testing.T, c *client.Client, name string, args map[string]any) (bool, map[string]any) {
	t.Helper()
	res, err := c.CallTool(context.Background(), mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		t.Fatalf("%s: JSON-RPC error %v (a refusal must be a tool result)", name, err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var structured map[string]any
	json.Unmarshal(raw, &structured)
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content items", name, len(res.Content))
	}
	text, ok := res.Content[0].(mcpgo.TextContent)
	var fromText map[string]any
	if !ok || json.Unmarshal([]byte(text.Text), &fromText) != nil || !jsonEqual(fromText, structured) {
		t.Fatalf("%s: text content is not the structured JSON: %+v", name, res.Content[0])
	}
	return res.IsError, structured
}

// sameAnswer compares the answers of two worlds: equal but for their
// cursors, which name log positions, and those come from each world's own
// transaction ids on PostgreSQL (see services.positionsPerTx).
func sameAnswer(a, b map[string]any) bool {
	return jsonEqual(withoutCursors(a), withoutCursors(b))
}

func withoutCursors(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == "cursor" {
				if s, ok := e.(string); ok && s != "" {
					e = "<cursor>"
				}
			}
			out[k] = withoutCursors(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutCursors(e)
		}
		return out
	}
	return v
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func reasonOf(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	r, _ := e["reason"].(string)
	return r
}

// humanToken adds a human account and returns a token acting as it.
func (s server) humanToken(t *testing.T, name string) string {
	t.Helper()
	if err := s.forum.AddUser(context.Background(), name, "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	tok, err := s.forum.CreateToken(context.Background(), services.TokenRequest{Human: name})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Secret
}

// rawMCP sends one request to /mcp as it is, and decodes the JSON answer;
// every answer at /mcp must be JSON-RPC.
func rawMCP(t *testing.T, base, token, method, body string, headers map[string]string) (*http.Response, map[string]any) {
	t.Helper()
	resp, raw := sendMCP(t, base, token, method, body, headers)
	var out map[string]any
	if method != "HEAD" && (json.Unmarshal(raw, &out) != nil || out["jsonrpc"] != "2.0" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json")) {
		t.Fatalf("%s /mcp answered %d %q, not JSON-RPC: %s", method, resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	return resp, out
}

// dig follows keys (and list indexes) into decoded JSON (testkit.Dig).
var dig = testkit.Dig

var listTools = mcpgo.ListToolsRequest{}

// sendMCP sends body to base's /mcp as a client of the transport does,
// with token and headers, and answers the response and its body as read.
func sendMCP(t *testing.T, base, token, method, body string, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, raw
}
