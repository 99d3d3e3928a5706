package mcp_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestToolCallCostsWhatHTTPDoes: a tool call over Streamable HTTP sends the
// database the statements the HTTP binding sends for the same operation —
// its admission (the token and the rate limits, one statement on
// PostgreSQL) once, at the gate, not a token check there and a count in
// the tool — for a post and for a read, whose admission also saves it the
// due-escalation probe.
func TestToolCallCostsWhatHTTPDoes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		// one clock: every request in one rate-limit window, none clearing older ones
		srv := start(t, db, services.Config{Now: fixedClock})
		ada := srv.token(t, "ada")
		_, out := rawMCP(t, srv.base, srv.token(t, "bob"), "POST", toolCall(1, "post", `{"kind":"ask","body":"Which option?"}`), nil)
		thread, _ := dig(out, "result", "structuredContent", "thread", "id").(string)
		if thread == "" {
			t.Fatalf("no thread: %v", out)
		}
		// ada's first post in the window clears her older windows and
		// notes the token's use: not counted
		rawMCP(t, srv.base, ada, "POST", toolCall(1, "post", `{"kind":"note","thread":"`+thread+`","body":"first"}`), nil)
		for i, c := range []struct {
			op, method, path, body, tool, args string
			httpOnly                           int // statements of the HTTP binding's own: a read's ETag
		}{
			{"post", "POST", "/api/v1/messages", `{"kind":"note","thread":"` + thread + `","body":"over HTTP %d"}`,
				"post", `{"kind":"note","thread":"` + thread + `","body":"over MCP %d"}`, 0},
			{"read_thread", "GET", "/api/v1/threads/" + thread, "", "read_thread", `{"thread":"` + thread + `"}`, 1},
		} {
			overHTTP := countStatements(t, db, func() {
				req, _ := http.NewRequest(c.method, srv.base+c.path, strings.NewReader(strings.ReplaceAll(c.body, "%d", strconv.Itoa(i))))
				req.Header.Set("Authorization", "Bearer "+ada)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil || resp.StatusCode >= 300 {
					t.Fatalf("%s over HTTP: %v %v", c.op, resp, err)
				}
				resp.Body.Close()
			})
			overMCP := countStatements(t, db, func() {
				_, out := rawMCP(t, srv.base, ada, "POST", toolCall(2, c.tool, strings.ReplaceAll(c.args, "%d", strconv.Itoa(i))), nil)
				if isErr, _ := dig(out, "result", "isError").(bool); isErr || dig(out, "result") == nil {
					t.Fatalf("%s over MCP: %v", c.op, out)
				}
			})
			if overMCP != overHTTP-c.httpOnly {
				t.Errorf("%s: %d statements over MCP, %d over HTTP (%d of them its own)", c.op, overMCP, overHTTP, c.httpOnly)
			}
		}
	})
}

func toolCall(id int, name, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args)
}

// countStatements counts the statements GORM sends on db while fn runs.
func countStatements(t *testing.T, db *gorm.DB, fn func()) int {
	t.Helper()
	var n atomic.Int64
	on := atomic.Bool{}
	count := func(*gorm.DB) {
		if on.Load() {
			n.Add(1)
		}
	}
	cb := db.Callback()
	name := fmt.Sprintf("test:count:%p", &n)
	for _, err := range []error{
		cb.Create().After("*").Register(name, count), cb.Query().After("*").Register(name, count),
		cb.Update().After("*").Register(name, count), cb.Delete().After("*").Register(name, count),
		cb.Row().After("*").Register(name, count), cb.Raw().After("*").Register(name, count),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	on.Store(true)
	fn()
	on.Store(false)
	return int(n.Load())
}
