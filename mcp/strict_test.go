package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/mcp"
	"parley/migrations/dbtest"
	"parley/services"
)

// TestStdioRefusesWhatJSONWouldChange sends raw lines over stdio: a tool
// call naming kind twice, and one with invalid UTF-8, come back as tool
// refusals naming the field; a well-formed call on the same stream still
// works; a non-call with a duplicate key gets a JSON-RPC parse error.
func TestStdioRefusesWhatJSONWouldChange(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		forum := services.New(db, services.Config{})
		token := server{forum: forum}.token(t, "alice")
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go mcp.ServeStdio(ctx, forum, token, inR, outW, slog.New(slog.DiscardHandler))
		lines := bufio.NewScanner(outR)
		send := func(line string) map[string]any {
			t.Helper()
			if _, err := io.WriteString(inW, line+"\n"); err != nil {
				t.Fatal(err)
			}
			got := make(chan map[string]any, 1)
			go func() {
				var out map[string]any
				if lines.Scan() {
					json.Unmarshal(lines.Bytes(), &out)
				}
				got <- out
			}()
			select {
			case out := <-got:
				return out
			case <-time.After(30 * time.Second): // only a hang takes this long
				t.Fatalf("no answer within 30 s to %s", line)
				return nil
			}
		}
		send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")

		for field, line := range map[string]string{
			"kind": `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"post","arguments":{"kind":"note","kind":"ask","body":"x"}}}`,
			"body": "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"post\",\"arguments\":{\"kind\":\"ask\",\"body\":\"caf\xe9\"}}}",
		} {
			out := send(line)
			res, _ := out["result"].(map[string]any)
			refusal, _ := res["structuredContent"].(map[string]any)["error"].(map[string]any)
			if res["isError"] != true || refusal["reason"] != "invalid_body" || refusal["field"] != field {
				t.Fatalf("%s: %v", field, out)
			}
		}
		ok := send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"post","arguments":{"kind":"ask","body":"Which port?"}}}`)
		if res, _ := ok["result"].(map[string]any); res == nil || res["isError"] == true {
			t.Fatalf("a good call after the refusals: %v", ok)
		}
		bad := send(`{"jsonrpc":"2.0","id":5,"id":6,"method":"tools/list"}`)
		if e, _ := bad["error"].(map[string]any); e == nil || e["code"] != float64(-32700) {
			t.Fatalf("duplicate key outside a tool call: %v", bad)
		}

		// What the library would misread gets an answer of its own, and
		// the session goes on.
		for name, line := range map[string]string{
			"a batch":           `[{"jsonrpc":"2.0","id":7,"method":"tools/list"}]`,
			"id null":           `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`,
			"past the line cap": `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"post","arguments":{"kind":"ask","body":"` + strings.Repeat("x", mcp.MaxMessageBytes) + `"}}}`,
		} {
			if e, _ := send(line)["error"].(map[string]any); e == nil || e["code"] != float64(-32600) {
				t.Fatalf("%s: want an Invalid Request error, got %v", name, e)
			}
		}
		big := send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"post","arguments":{"kind":"ask","body":"` + strings.Repeat("x", 20000) + `"}}}`)
		res, _ := big["result"].(map[string]any)
		refusal, _ := res["structuredContent"].(map[string]any)["error"].(map[string]any)
		if res["isError"] != true || refusal["reason"] != "invalid_body" || refusal["field"] != "body" {
			t.Fatalf("an oversized post over stdio: %v", big)
		}
		if e, _ := send(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":5}}`)["error"].(map[string]any); e == nil || strings.Contains(e["message"].(string), "json:") {
			t.Fatalf("the library's error must not speak Go: %v", e)
		}
		if again := send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`); again["result"] == nil {
			t.Fatalf("the session must go on: %v", again)
		}
	})
}
