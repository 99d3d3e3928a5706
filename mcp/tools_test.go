package mcp_test

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"parley/mcp"
	"parley/migrations/dbtest"
	"parley/services"
)

// TestToolSnapshots keeps what agents see under review: each tool's name,
// description, schemas and hints are snapshotted in testdata/tools. After a
// deliberate change, regenerate with UPDATE_SNAPSHOTS=1 go test ./mcp.
func TestToolSnapshots(t *testing.T) {
	forum := services.New(dbtest.Fresh(t, "sqlite"), services.Config{})
	for _, tool := range mcp.Tools(forum, slog.New(slog.DiscardHandler)) {
		t.Run(tool.Tool.Name, func(t *testing.T) {
			got, err := json.MarshalIndent(tool.Tool, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "tools", tool.Tool.Name+".json")
			if os.Getenv("UPDATE_SNAPSHOTS") == "1" {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("no snapshot (run UPDATE_SNAPSHOTS=1 go test ./mcp): %v", err)
			}
			if string(got) != string(want) {
				t.Fatalf("tool %s differs from %s; if the change is deliberate, regenerate with UPDATE_SNAPSHOTS=1", tool.Tool.Name, path)
			}
		})
	}
}

// hints are a tool's annotations (MCP 2025-03-26 and later).
type hints struct{ readOnly, destructive, idempotent, openWorld bool }

// toolHints says, tool by tool, what each one does, written from the
// protocol rather than from the code that sets them: reads change nothing;
// nothing Parley does deletes or overwrites (a post appends, a confirm
// makes a proposal the state of record); repeating a confirm or a read
// changes nothing more, repeating a post without its idempotency_key would
// store a second message; and every result that carries what other
// participants wrote (bodies, titles, evidence, handles) is open-world.
var toolHints = map[string]hints{
	"get_manifest":    {readOnly: true, idempotent: true},
	"whoami":          {readOnly: true, idempotent: true},
	"post":            {openWorld: true},
	"read_thread":     {readOnly: true, idempotent: true, openWorld: true},
	"list_threads":    {readOnly: true, idempotent: true, openWorld: true},
	"inbox":           {readOnly: true, idempotent: true, openWorld: true},
	"get_events":      {readOnly: true, idempotent: true, openWorld: true},
	"confirm":         {idempotent: true, openWorld: true},
	"get_claim":       {readOnly: true, idempotent: true, openWorld: true},
	"list_claims":     {readOnly: true, idempotent: true, openWorld: true},
	"list_identities": {readOnly: true, idempotent: true, openWorld: true},
	"search":          {readOnly: true, idempotent: true, openWorld: true},
	"put_blob":        {},
	"get_blob":        {readOnly: true, idempotent: true, openWorld: true},
	"get_statement":   {readOnly: true, idempotent: true, openWorld: true},
}

// TestToolsFollowTheOperationTable checks names, hints and the schema each
// tool declares.
func TestToolsFollowTheOperationTable(t *testing.T) {
	forum := services.New(dbtest.Fresh(t, "sqlite"), services.Config{})
	tools := mcp.Tools(forum, slog.New(slog.DiscardHandler))
	ops := services.MCPOperations()
	if len(tools) != len(ops) || len(ops) < len(services.Operations)-1 {
		t.Fatalf("%d tools for %d operations with a tool", len(tools), len(ops))
	}
	for i, tool := range tools {
		op, tl := ops[i], tool.Tool
		if tl.Name != op.MCPTool {
			t.Errorf("tool %d is %s, want %s", i, tl.Name, op.MCPTool)
		}
		a := tl.Annotations
		if a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: hints not all set explicitly: %+v", tl.Name, a)
			continue
		}
		want, ok := toolHints[tl.Name]
		if !ok {
			t.Errorf("%s: no row in toolHints: say what the tool does", tl.Name)
		}
		got := hints{*a.ReadOnlyHint, *a.DestructiveHint, *a.IdempotentHint, *a.OpenWorldHint}
		if got != want {
			t.Errorf("%s: hints %+v, want %+v", tl.Name, got, want)
		}
		if says := strings.Contains(tl.Description, "never instructions"); says != want.openWorld {
			t.Errorf("%s: the description warns that others' text is data: %v, want %v", tl.Name, says, want.openWorld)
		}
		var out struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
			Defs       any                        `json:"$defs"`
		}
		json.Unmarshal(tl.RawOutputSchema, &out)
		if out.Type != "object" || out.Properties["error"] == nil || len(out.Properties) < 2 || out.Required != nil || out.Defs != nil {
			t.Errorf("%s: output schema must be one shallow object admitting success and refusal: %s", tl.Name, tl.RawOutputSchema)
		}
		if len(tl.Description) < 100 {
			t.Errorf("%s: description too thin for a model: %q", tl.Name, tl.Description)
		}
		checkWording(t, tl.Name, tl.Title, tl.Description, string(tl.RawOutputSchema))
	}
	var post map[string]any
	json.Unmarshal(tools[2].Tool.RawInputSchema, &post)
	kinds := post["$defs"].(map[string]any)["Kind"].(map[string]any)["enum"].([]any)
	if len(kinds) != 13 || post["additionalProperties"] != false {
		t.Fatalf("post's input schema is not the envelope with the nine acts and the four dialectic acts: %v", post)
	}
	for _, field := range []string{"claim", "evidence", "supersedes", "valid_until"} {
		if post["properties"].(map[string]any)[field] == nil {
			t.Errorf("post's input schema lacks the dialectic field %s", field)
		}
	}
	if msg := services.EnvelopeFieldsMatch(); msg != "" {
		t.Fatalf("envelope schema and parser disagree: %s", msg)
	}
}

// checkWording keeps what a model reads free of what only a maintainer
// knows: HTTP details (the tool is all an MCP client sees), Go type names,
// and sentences said twice. Titles are in sentence case.
func checkWording(t *testing.T, name, title, description, outputSchema string) {
	t.Helper()
	if title == "" || !unicode.IsUpper([]rune(title)[0]) || strings.ContainsAny(title, "_") || title != strings.ToUpper(title[:1])+strings.ToLower(title[1:]) && !strings.HasSuffix(title, " I") {
		t.Errorf("%s: title %q is not in sentence case", name, title)
	}
	for _, leak := range []string{"HTTP", "GET /", "POST /", "/api/", "201", "json.", "map[", "On success the"} {
		if strings.Contains(description, leak) || strings.Contains(outputSchema, leak) {
			t.Errorf("%s: the description or output schema says %q", name, leak)
		}
	}
	seen := map[string]bool{}
	for _, sentence := range strings.Split(description, ". ") {
		key := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(sentence), "."))
		if seen[key] {
			t.Errorf("%s: the description says twice %q", name, sentence)
		}
		seen[key] = true
	}
}
