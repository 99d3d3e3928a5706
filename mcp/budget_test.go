package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"parley/migrations/dbtest"
	"parley/services"
)

// The context budget of issue 26 for small models: what tools/list shows a
// client that holds every right, and the compact manifest, in characters
// of their JSON.
const (
	toolsListMaxChars       = 25000
	compactManifestMaxChars = 8000
)

// TestContextBudget measures tools/list and get_manifest as a real client
// receives them, and fails when they grow past the budget. Both forms of
// get_manifest are measured in the same run; the test logs their ratio.
func TestContextBudget(t *testing.T) {
	s := start(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	tok := s.token(t, "budget", services.RightRead, services.RightWrite, services.RightLock, services.RightVerify)
	c := httpClient(t, s.base+"/mcp", tok)
	ctx := context.Background()
	tools, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(tools)
	if len(tools.Tools) != len(services.MCPOperations()) {
		t.Fatalf("%d tools listed for a token with every right, want %d", len(tools.Tools), len(services.MCPOperations()))
	}
	t.Logf("tools/list: %d characters for %d tools (budget %d)", len(raw), len(tools.Tools), toolsListMaxChars)
	if len(raw) > toolsListMaxChars {
		t.Errorf("tools/list is %d characters, over its budget of %d", len(raw), toolsListMaxChars)
	}
	size := map[bool]int{}
	for _, compact := range []bool{false, true} {
		res, err := c.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: "get_manifest", Arguments: map[string]any{"compact": compact}}})
		if err != nil || res.IsError {
			t.Fatalf("get_manifest compact %v: %v %+v", compact, err, res)
		}
		body, _ := json.Marshal(res.StructuredContent)
		size[compact] = len(body)
		var m map[string]any
		json.Unmarshal(body, &m)
		if _, hasNorms := m["norms"]; hasNorms == compact {
			t.Errorf("get_manifest compact %v answered the other form", compact)
		}
	}
	t.Logf("get_manifest: full %d characters, compact %d (%.2f of the full)", size[false], size[true], float64(size[true])/float64(size[false]))
	if size[true] > compactManifestMaxChars {
		t.Errorf("the compact manifest is %d characters, over its budget of %d", size[true], compactManifestMaxChars)
	}
	res, err := c.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: "get_manifest", Arguments: map[string]any{"compact": "yes"}}})
	if err != nil || !res.IsError {
		t.Fatalf("get_manifest compact \"yes\" was not refused: %v %+v", err, res)
	}
}

// TestFullSchemasAreResources reads a tool's full output schema, the one
// tools/list leaves out, as the resource parley://schemas/<tool>.
func TestFullSchemasAreResources(t *testing.T) {
	s := start(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	c := httpClient(t, s.base+"/mcp", s.token(t, "schemas"))
	res, err := c.ReadResource(context.Background(), mcpgo.ReadResourceRequest{Params: mcpgo.ReadResourceParams{URI: "parley://schemas/read_thread"}})
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("read parley://schemas/read_thread: %v %+v", err, res)
	}
	text := res.Contents[0].(mcpgo.TextResourceContents).Text
	var schema struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal([]byte(text), &schema); err != nil || schema.Defs["Message"] == nil || schema.Defs["Thread"] == nil {
		t.Fatalf("the full schema of read_thread lacks Message and Thread: %v %.300s", err, text)
	}
	if _, err := c.ReadResource(context.Background(), mcpgo.ReadResourceRequest{Params: mcpgo.ReadResourceParams{URI: "parley://schemas/nope"}}); err == nil {
		t.Fatal("a schema of no tool was read")
	}
}
