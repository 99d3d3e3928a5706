package mcp_test

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"parley/mcp"
	"parley/migrations/dbtest"
	"parley/services"
)

// TestDirectCallsAnswerAsTheLibrary sends the same messages to two worlds
// that differ only in how /mcp serves a tool call that answers at once: one
// through the gate's direct path (direct.go), one through the MCP library
// alone. Every answer must be the same bytes, status and Content-Type: the
// calls of the parity scenario, which reach every core operation and
// refusal, and messages at the edge of what the direct path takes (ids
// the library reads as floats, arguments it normalizes, _meta, protocol
// version headers, shapes it refuses), which it must leave to the library
// or answer as the library does.
func TestDirectCallsAnswerAsTheLibrary(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ *gorm.DB) {
		dialect, cfg := parityWorlds(t)
		var served atomic.Int64
		direct, library := newWorldWith(t, dialect, cfg, mcp.CountDirect(&served)), newWorldWith(t, dialect, cfg, mcp.LibraryOnly)
		type msg struct {
			who, body string
			headers   map[string]string
			direct    bool // served by the gate itself
		}
		var msgs []msg
		for i, s := range parityScenario() {
			call := map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": map[string]any{"name": s.op, "arguments": s.args}}
			// A bad or missing token is answered before any tool runs;
			// "arguments": null (no arguments in the step) is the library's.
			answered := s.who == "forged" || s.who == "revoked" || s.who == "" && s.reason == services.TokenMissing
			msgs = append(msgs, msg{who: s.who, body: mustJSON(call), direct: !answered && s.args != nil && s.op != "inbox" && s.op != "get_events"})
		}
		edge := []struct {
			body   string
			direct bool
		}{
			{`{"jsonrpc":"2.0","id":"a-string","method":"tools/call","params":{"name":"whoami"}}`, true},
			{`{"jsonrpc":"2.0","id":7.0,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`, true},
			{`{"jsonrpc":"2.0","id":1e3,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`, true},
			{`{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`, true},
			{`{"jsonrpc":"2.0","id":-4,"method":"tools/call","params":{"name":"read_thread","arguments":{"thread":1.0,"limit":2.0}}}`, true},
			{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"read_thread","arguments":{"thread":"th_1","limit":1e1}}}`, true},
			{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"post","arguments":{"kind":"note","thread":"th_2","body":"<b>&amp;</b> \u00e9"}}}`, true},
			{`{"id":10,"params":{"arguments":{"thread":"th_1"},"name":"read_thread"},"method":"tools/call","jsonrpc":"2.0"}`, true},
			{`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"whoami","arguments":{},"_meta":{"progressToken":3}}}`, false},
			{`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`, false},
			{`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"whoami","arguments":[1]}}`, false},
			{`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"whoami","arguments":null}}`, false},
			{`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"Name":"whoami"}}`, false},
			{`{"jsonrpc":"2.0","id":16,"Method":"tools/call","params":{"name":"whoami"}}`, false},
			{`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"whoami"},"extra":true}`, false},
			{`{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"whoami","name":"post"}}`, false},
			{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"whoami"}}`, false},
			{`{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"inbox","arguments":{}}}`, false},
			{`{"jsonrpc":"2.0","id":20,"method":"tools/list"}`, false},
			{`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"read_thread","arguments":{"thread":"th_1","depth":"x"}}}`, true},
		}
		for _, e := range edge {
			msgs = append(msgs, msg{who: "bob", body: e.body, direct: e.direct})
		}
		for v, direct := range map[string]bool{"2025-06-18": true, "2025-03-26": true, "2026-07-28": false, "1999-01-01": false} {
			msgs = append(msgs, msg{who: "bob", body: `{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`,
				headers: map[string]string{"MCP-Protocol-Version": v}, direct: direct})
		}
		for i, m := range msgs {
			before := served.Load()
			d := send(t, direct, m.who, m.body, m.headers)
			if went := served.Load() > before; went != m.direct {
				t.Errorf("message %d %s %v: served by the gate itself: %v, want %v", i, m.body, m.headers, went, m.direct)
			}
			l := send(t, library, m.who, m.body, m.headers)
			if d != l {
				t.Fatalf("message %d %s %v:\ndirect  %s\nlibrary %s", i, m.body, m.headers, d, l)
			}
		}
	})
}

// send posts body to the world's /mcp as who and answers the status,
// Content-Type and body in one string.
func send(t *testing.T, w *world, who, body string, headers map[string]string) string {
	t.Helper()
	resp, raw := sendMCP(t, w.srv.base, w.tokens[who], "POST", body, headers)
	// On PostgreSQL a log position comes from the writing transaction's
	// id, which two worlds in one cluster do not share.
	raw = cursor.ReplaceAll(raw, []byte("CURSOR"))
	var header []string // every header but those of the moment
	for k, v := range resp.Header {
		if k != "Date" && k != "X-Request-Id" && k != "Content-Length" {
			header = append(header, k+": "+strings.Join(v, ", "))
		}
	}
	slices.Sort(header)
	return fmt.Sprintf("%d %q %s", resp.StatusCode, header, bytes.TrimSpace(raw))
}

var cursor = regexp.MustCompile(`\b[a-z][0-9]\.[A-Za-z0-9_-]{4,}`)
