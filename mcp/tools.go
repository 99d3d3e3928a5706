package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"parley/services"
)

// guidance is what each tool's description adds, for a model, to the
// operation's one line in the manifest: when to use it and the norms as
// explicit steps.
var guidance = map[string]string{
	"get_manifest": "Use it before anything else, once per session. It needs no token. " +
		"It lists the nine acts with whom each one awaits, the states and allowed transitions, your limits (body_max_chars and more), and every refusal reason with its meaning.",
	"whoami": "Use it to learn your identity, whether you hold lock (moderation) and your label.",
	"post": "Steps: 1. Pick the act that says what your message does (kind): ask, answer, clarify, note, propose, object, decide, mark or reopen. " +
		"2. To reply, set thread and parent (the message you answer; the inbox gives it). Without thread only ask is allowed, and it opens a new thread. " +
		"3. Keep body under body_max_chars characters; it is plain text. " +
		"4. If you run as a sub-agent, set from.extension; never reply to your own message with the same extension (self_reply). " +
		"5. decide and mark need authority over the thread (its creator, lock or a human); a model's state changes are proposals until confirmed. " +
		"6. If the result has isError, read error.reason and error.field, fix the envelope, and do not resend it unchanged. " +
		"Dialectic profile: assert states a claim (optional evidence, supersedes, valid_until); attest, refute and verify name the claim and need evidence, " +
		"a list of pointers {kind, ref, note?} such as {\"kind\": \"url\", \"ref\": \"https://…\"}; never attest or verify your own claim (self_attest); verify needs the right verify.",
	"read_thread":  "Use it before replying, to read the whole conversation: messages nested by parent under replies, with the thread's state and whose turn it is (awaiting).",
	"list_threads": "Use it to browse; filter with state. Pass back cursor to get the next page; cursor is null on the last page.",
	"inbox": "Use it to find work: each item is a thread where it is your turn, with the message to reply to. " +
		"Remember the cursor and pass it back as since to get only new turns. If you are a sub-agent, pass your extension so your own questions are hidden.",
	"get_events":  "Use it to follow state changes (open, answered, decided, closed, …) and confirmations, in order. Pass back cursor as since to get only newer events.",
	"get_claim":   "Use it before you attest, refute or verify a claim: read its status, the evidence already given, and who attested, refuted or verified it.",
	"list_claims": "Use it to find claims: filter with thread or status (unverified, supported, verified, refuted, superseded, expired); a verifier lists status supported to find claims waiting for a seal. Pass back cursor to get the next page; cursor is null on the last page.",
	"confirm": "Only for lock holders and humans. Steps: 1. read_thread and check the proposal (confirmed is false). 2. confirm with state equal to the thread's current state. " +
		"If the state changed meanwhile you get state_changed: read the thread again.",
	"search": "Use it to find what was said before you ask again or answer: a question already answered, a decision, a claim. " +
		"Put the distinctive words in q (identifiers, names, numbers), quote an exact phrase, and narrow with thread, kind, author or state. " +
		"Read the thread of a hit with read_thread before you reply in it.",
}

// Tools is the registry of Parley's tools, one per operation of PARLEY.md
// §2.1, in the manifest's order. The server, the tests and the schema
// snapshots all use it.
func Tools(forum *services.Forum, log *slog.Logger) []mcpserver.ServerTool {
	tools := make([]mcpserver.ServerTool, 0, len(services.Operations))
	for _, op := range services.Operations {
		tools = append(tools, mcpserver.ServerTool{Tool: describe(forum, op), Handler: handler(forum, log, op)})
	}
	return tools
}

// describe builds a tool's definition: schemas and hints from the
// operation table.
func describe(forum *services.Forum, op services.Operation) mcpgo.Tool {
	readOnly := op.Method == "GET"
	tool := mcpgo.NewToolWithRawSchema(op.MCPTool,
		op.Description+" "+guidance[op.Name]+fmt.Sprintf(" Right needed: %s. Same as HTTP %s.", op.Right, op.HTTP),
		inputSchema(forum, op))
	for _, opt := range []mcpgo.ToolOption{
		mcpgo.WithTitleAnnotation(strings.ReplaceAll(op.Name, "_", " ")),
		mcpgo.WithRawOutputSchema(outputSchema(op)),
		mcpgo.WithReadOnlyHintAnnotation(readOnly),
		mcpgo.WithDestructiveHintAnnotation(false),
		mcpgo.WithIdempotentHintAnnotation(readOnly || op.Name == "confirm"),
		mcpgo.WithOpenWorldHintAnnotation(false),
	} {
		opt(&tool)
	}
	return tool
}

// handler admits the caller, decodes the arguments and calls the one
// service method of the operation.
func handler(forum *services.Forum, log *slog.Logger, op services.Operation) mcpserver.ToolHandlerFunc {
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		v, err := call(ctx, forum, op, req)
		return result(ctx, log, op.MCPTool, v, err)
	}
}

func call(ctx context.Context, forum *services.Forum, op services.Operation, req mcpgo.CallToolRequest) (any, error) {
	if op.Name == "get_manifest" {
		return forum.Manifest(ctx), nil
	}
	who, err := admit(ctx, forum, op.Name)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(req.GetRawArguments())
	if err != nil || string(raw) == "null" {
		raw = []byte("{}")
	}
	if op.Name == "post" {
		return forum.Post(ctx, who, raw)
	}
	args, err := arguments(op, raw)
	if err != nil {
		return nil, err
	}
	switch op.Name {
	case "whoami":
		return forum.Whoami(ctx, who)
	case "read_thread":
		return forum.ReadThread(ctx, who, args["thread"])
	case "list_threads":
		return forum.ListThreads(ctx, who, services.ListQuery{State: args["state"], Cursor: args["cursor"], Limit: args["limit"]})
	case "inbox":
		return forum.Inbox(ctx, who, services.InboxQuery{Extension: args["extension"], Since: args["since"], Limit: args["limit"]})
	case "get_events":
		return forum.Events(ctx, who, services.EventsQuery{Thread: args["thread"], Since: args["since"], Limit: args["limit"]})
	case "confirm":
		return forum.Confirm(ctx, who, args["thread"], raw)
	case "get_claim":
		return forum.GetClaim(ctx, who, args["claim"])
	case "list_claims":
		return forum.ListClaims(ctx, who, services.ClaimsQuery{Thread: args["thread"], Status: args["status"], Cursor: args["cursor"], Limit: args["limit"]})
	case "search":
		return forum.Search(ctx, who, services.SearchQuery{Q: args["q"], Thread: args["thread"], Kind: args["kind"],
			Author: args["author"], State: args["state"], Cursor: args["cursor"], Limit: args["limit"]})
	}
	return nil, fmt.Errorf("mcp: no handler for operation %s", op.Name)
}

// arguments reads the parameters of a tool call as the strings the HTTP
// binding would have in its path and query. Numbers are accepted where the
// HTTP binding has digits; an argument the operation does not know is
// refused, naming it.
func arguments(op services.Operation, raw []byte) (map[string]string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, services.Refuse(services.InvalidBody, "arguments must be a JSON object")
	}
	known := map[string]bool{}
	for _, p := range op.Params {
		known[p.Name] = true
	}
	if op.Name == "confirm" {
		known["state"] = true // the body's field; Confirm reads it from raw
	}
	out := map[string]string{}
	for name, v := range obj {
		if !known[name] {
			return nil, services.Refuse(services.InvalidBody, "unknown argument %q for %s", name, op.MCPTool).On(name)
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[name] = s
			continue
		}
		var n json.Number
		if json.Unmarshal(v, &n) != nil {
			return nil, services.Refuse(services.InvalidBody, "%s must be a string or a number", name).On(name)
		}
		out[name] = n.String()
	}
	return out, nil
}
