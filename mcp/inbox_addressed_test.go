package mcp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestAddressedInboxOverMCP: the inbox tool's addressed argument (a
// boolean) finds alice's one addressed turn under 120 open asks to anyone,
// pages it with its own cursor and refuses a cursor of the other view;
// its description tells a model when to use it (docs/protocol.md §8).
func TestAddressedInboxOverMCP(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		srv := start(t, db, services.Config{})
		alice, bob, carol := srv.token(t, "alice"), srv.token(t, "bob"), srv.token(t, "carol")
		ctx := context.Background()
		post := func(secret, raw string) services.Posted {
			t.Helper()
			who, err := srv.forum.Authenticate(ctx, secret)
			if err != nil {
				t.Fatal(err)
			}
			p, err := srv.forum.Post(ctx, who, []byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		for i := range 120 {
			post(bob, fmt.Sprintf(`{"kind":"ask","body":"Open question %d, for anyone?"}`, i))
		}
		first := post(carol, `{"kind":"ask","to":{"identity":"ainotes:alice"},"body":"Alice, is the key rotated?"}`)
		second := post(bob, `{"kind":"ask","to":{"identity":"ainotes:alice"},"body":"Alice, and the logs?"}`)

		c := httpClient(t, srv.base+"/mcp", alice)
		failed, full := callTool(t, c, "inbox", nil)
		if failed || len(full["items"].([]any)) != 50 {
			t.Fatalf("full inbox: %v", full)
		}
		failed, p1 := callTool(t, c, "inbox", map[string]any{"addressed": true, "limit": 1})
		if failed || len(p1["items"].([]any)) != 1 || dig(p1, "items", 0, "thread", "id") != first.Thread.ID {
			t.Fatalf("addressed page 1: %v", p1)
		}
		failed, p2 := callTool(t, c, "inbox", map[string]any{"addressed": true, "since": p1["cursor"]})
		if failed || len(p2["items"].([]any)) != 1 || dig(p2, "items", 0, "thread", "id") != second.Thread.ID {
			t.Fatalf("addressed page 2: %v", p2)
		}
		for _, bad := range []struct {
			args  map[string]any
			field string
			word  string
		}{
			{map[string]any{"since": p1["cursor"]}, "since", "addressed"},
			{map[string]any{"addressed": true, "since": full["cursor"]}, "since", "full inbox"},
			{map[string]any{"addressed": "maybe"}, "addressed", "true or false"},
			{map[string]any{"addressed": 1}, "addressed", "true or false"},
		} {
			failed, r := callTool(t, c, "inbox", bad.args)
			msg, _ := dig(r, "error", "message").(string)
			if !failed || reasonOf(r) != string(services.InvalidBody) || dig(r, "error", "field") != bad.field || !strings.Contains(msg, bad.word) {
				t.Fatalf("inbox %v: %v", bad.args, r)
			}
		}

		tools, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools.Tools {
			if tool.Name != "inbox" {
				continue
			}
			if !strings.Contains(tool.Description, "addressed to true to see first the turns addressed to you") {
				t.Fatalf("the inbox tool does not tell when to use addressed: %q", tool.Description)
			}
			if p, ok := tool.InputSchema.Properties["addressed"].(map[string]any); !ok || p["type"] != "boolean" {
				t.Fatalf("the inbox tool's addressed argument: %#v", tool.InputSchema.Properties["addressed"])
			}
		}
	})
}
