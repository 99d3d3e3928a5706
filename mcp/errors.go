package mcp

import (
	"context"
	"encoding/json"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"parley/internal/faultlog"
	"parley/services"
)

// result is the one place where a service's answer becomes a tool result:
// on success the value itself as structuredContent, and the same JSON as
// text; on any error the refusal object of docs/protocol.md §2.2 with isError set.
// Faults that are not refusals are logged (internal/faultlog); the model
// sees only internal, or unavailable.
func result(ctx context.Context, faults *faultlog.Log, tool string, v any, err error) (*mcpgo.CallToolResult, error) {
	if err != nil {
		r, unexpected := services.AsRefusal(err)
		if unexpected {
			faults.Report(ctx, "tool failed", err, r, "tool", tool)
		}
		v = services.RefusalBody{Error: r}
	}
	text, merr := json.Marshal(v)
	if merr != nil {
		return nil, merr
	}
	return &mcpgo.CallToolResult{
		Content:           []mcpgo.Content{mcpgo.NewTextContent(string(text))},
		StructuredContent: json.RawMessage(text),
		IsError:           err != nil,
	}, nil
}
