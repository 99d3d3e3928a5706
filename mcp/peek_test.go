package mcp

import (
	"encoding/json"
	"testing"
)

// TestPeekReadsWhatTheLibraryWill walks the messages the gate must read
// in one pass: peek's method and tool are those encoding/json decodes
// into the MCP library's types (ignoring case, the last one winning), and
// its jsonrpc and id the exact members the screen checks.
func TestPeekReadsWhatTheLibraryWill(t *testing.T) {
	for _, c := range []struct {
		msg          string
		jsonrpc, id  string
		method, tool string
		immediate    bool
	}{
		{msg: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"post","arguments":{"body":"x"}}}`,
			jsonrpc: `"2.0"`, id: `7`, method: "tools/call", tool: "post", immediate: true},
		{msg: `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"inbox"}}`,
			jsonrpc: `"2.0"`, id: `"a"`, method: "tools/call", tool: "inbox"},
		{msg: `{"params":{"arguments":{"name":"not this"},"name":"read_thread"},"method":"tools/call","id":null,"jsonrpc":"2.0"}`,
			jsonrpc: `"2.0"`, id: `null`, method: "tools/call", tool: "read_thread", immediate: true},
		{msg: `{"jsonrpc":"2.0","Method":"tools/call","PARAMS":{"Name":"post"}}`,
			jsonrpc: `"2.0"`, method: "tools/call", tool: "post", immediate: true},
		{msg: `{"JSONRPC":"2.0","ID":1,"method":"tools/list"}`, method: "tools/list"},
		{msg: `{"jsonrpc":"2.0","id":1,"method":5,"params":["post"]}`, jsonrpc: `"2.0"`, id: `1`},
		{msg: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"po\u0073t"}}`,
			jsonrpc: `"2.0"`, id: `1`, method: "tools/call", tool: "post", immediate: true},
		{msg: `[{"jsonrpc":"2.0"}]`},
		{msg: `{"jsonrpc":"2.0",`, jsonrpc: `"2.0"`},
	} {
		m := peek([]byte(c.msg))
		if string(m.jsonrpc) != c.jsonrpc || string(m.id) != c.id || m.method != c.method || m.tool != c.tool {
			t.Errorf("peek(%s) = jsonrpc %s, id %s, method %q, tool %q; want %s, %s, %q, %q",
				c.msg, m.jsonrpc, m.id, m.method, m.tool, c.jsonrpc, c.id, c.method, c.tool)
		}
		if got := Immediate([]byte(c.msg)); got != c.immediate {
			t.Errorf("Immediate(%s) = %v, want %v", c.msg, got, c.immediate)
		}
		// What encoding/json reads into the library's shape agrees.
		var lib struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(c.msg), &lib) == nil && (lib.Method != m.method || lib.Params.Name != m.tool) {
			t.Errorf("%s: encoding/json reads method %q tool %q, peek %q %q", c.msg, lib.Method, lib.Params.Name, m.method, m.tool)
		}
	}
}
