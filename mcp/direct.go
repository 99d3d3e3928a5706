package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// A call of a tool that answers at once (Immediate) is most of what agents
// send, and the MCP library's transport spent more on it than Parley's
// tool did beside the HTTP binding (issue 31: a per-request session and
// its notification goroutine, the message decoded six times). The gate
// serves such a call itself, with the library's own tool handler (the
// server's registry, handlers), and answers what the library would have
// answered, byte for byte: the same JSON-RPC response from the same types,
// written by the same encoder. TestDirectCallsAnswerAsTheLibrary compares
// the two paths on every call of the parity scenario and on messages at
// the edge of what the gate takes.
//
// It takes only a message the library would serve along its plainest path
// (message.plain: no _meta, no task, nothing but name and arguments) with
// no protocol version header or one of the versions before 2026-07-28
// (which changes the transport's rules); anything else, and every waiting
// call, goes to the library as before. What the library does around a tool
// call that this does not: hooks and telemetry for tool calls (Parley
// registers none over HTTP), input and output schema validation (not
// enabled), tasks and multi-round-trip results (no Parley tool has them),
// and the in-flight registry that notifications/cancelled uses, which a
// stateless server cannot route anyway (each request is its own session).

// handlers are the tool handlers of an MCP server, by tool name.
type handlers map[string]mcpserver.ToolHandlerFunc

func handlersOf(srv *mcpserver.MCPServer) handlers {
	h := handlers{}
	for name, tool := range srv.ListTools() {
		h[name] = tool.Handler
	}
	return h
}

// direct answers msg, a message of the request r, itself and reports
// true, or reports false and leaves it to the library.
func (g gate) direct(w mcpserver.HTTPResponseWriter, r *mcpserver.HTTPRequest, msg message, answered func([]byte) bool) bool {
	op, ok := msg.operation()
	if !ok || !msg.plain || !answersAtOnce(op) {
		return false
	}
	if v := r.Header.Get(mcpgo.HeaderProtocolVersion); v != "" && (!mcpgo.IsValidProtocolVersion(v) || mcpgo.IsModernProtocol(v)) {
		return false
	}
	handler := g.tools[msg.tool]
	if handler == nil {
		return false
	}
	// The id and the arguments as the library decodes them into its types
	// (an id that is a number becomes a float64; the arguments are kept as
	// sent beside their decoding), so that what the handler sees and what
	// the answer echoes are the same.
	var id, args any
	if json.Unmarshal(msg.id, &id) != nil || len(msg.args) > 0 && json.Unmarshal(msg.args, &args) != nil {
		return false
	}
	req := mcpgo.CallToolRequest{Header: r.Header}
	req.Method = string(mcpgo.MethodToolsCall)
	req.Params.Name, req.Params.Arguments, req.Params.RawArguments = msg.tool, args, msg.args
	var answer mcpgo.JSONRPCMessage
	if res, err := callRecovered(r.Context, handler, req); err != nil {
		answer = mcpgo.JSONRPCError{JSONRPC: mcpgo.JSONRPC_VERSION, ID: mcpgo.NewRequestId(id),
			Error: mcpgo.NewJSONRPCErrorDetails(mcpgo.INTERNAL_ERROR, err.Error(), nil)}
	} else {
		answer = mcpgo.NewJSONRPCResultResponse(mcpgo.NewRequestId(id), res)
	}
	var out bytes.Buffer
	if err := json.NewEncoder(&out).Encode(answer); err != nil {
		return false
	}
	header := http.Header{"Content-Type": {"application/json"}}
	reply(w, http.StatusOK, header, out.Bytes(), answered)
	if g.served != nil {
		g.served.Add(1)
	}
	return true
}

// callRecovered calls a tool's handler as the library's WithRecovery does:
// a panic becomes the error the library answers; so does a handler that
// returns neither a result nor an error.
func callRecovered(ctx context.Context, handler mcpserver.ToolHandlerFunc, req mcpgo.CallToolRequest) (res *mcpgo.CallToolResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("panic recovered in %s tool handler: %v", req.Params.Name, p)
		}
	}()
	res, err = handler(ctx, req)
	if res == nil && err == nil {
		err = fmt.Errorf("tool '%s' handler returned no result", req.Params.Name)
	}
	return res, err
}
