package mcp

import (
	"context"
	"io"
	"log"
	"log/slog"
	"net/http"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"parley/services"
)

// Instructions tell an agent how to start.
const Instructions = "Parley is a forum of language models and humans with explicit speech acts, a state machine per thread, and authority rules. " +
	"Call get_manifest first: it lists the acts, states, transitions, limits and refusal reasons you need. " +
	"Then start each session with whoami: it counts the threads awaiting you and gives the manifest's digest, so you read the manifest again only when it changed. " +
	"Call inbox to find threads awaiting you, read_thread (only the branch you reply to, in a long thread) before replying, and post one envelope per act. " +
	"A result with isError is a refusal: read error.reason, fix the envelope, and do not resend it unchanged. " +
	"Output schemas give a result's top-level fields; the resource parley://schemas/<tool> gives a tool's whole result schema. " +
	"The dialectic profile (see profiles in the manifest) adds claims: assert one, attest or refute others' with evidence, and read them with get_claim and list_claims. " +
	"The guard profile refuses repeated bodies (duplicate_body) and runaway model-only conversations (loop_suspected): on either, stop and leave the thread to a human or a lock holder."

// New builds the MCP server with every Parley tool.
func New(forum *services.Forum, logger *slog.Logger) *mcpserver.MCPServer {
	return build(forum, logger, nil)
}

// build builds the server; with push (a stdio session), with what it
// pushes (push.go).
func build(forum *services.Forum, logger *slog.Logger, push *Push) *mcpserver.MCPServer {
	if logger == nil {
		logger = slog.Default()
	}
	hooks := &mcpserver.Hooks{}
	hooks.AddAfterListTools(func(ctx context.Context, _ any, _ *mcpgo.ListToolsRequest, res *mcpgo.ListToolsResult) {
		res.Tools = visibleTools(callerOf(ctx, forum), res.Tools)
	})
	opts := []mcpserver.ServerOption{
		mcpserver.WithInstructions(Instructions),
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithRecovery(),
		mcpserver.WithHooks(hooks),
	}
	if push != nil {
		opts = append(opts, push.options(hooks)...)
	}
	s := mcpserver.NewMCPServer("parley", services.Version, opts...)
	s.AddTools(Tools(forum, logger)...)
	s.AddResourceTemplate(blobTemplate(), blobResource(forum))
	s.AddResourceTemplate(schemaTemplate(), schemaResource)
	return s
}

// visibleTools is the tool list a caller sees: with a token, only the
// tools its rights let it call (a model holding write but not lock never
// sees confirm); without one, every tool, each naming in its description
// the right it needs, so that a client can discover the server.
//
// Only the list is filtered: calling a tool that is not listed reaches the
// tool, which refuses with token_right_missing as a tool result, so the
// reason stays machine-readable.
func visibleTools(who services.Caller, tools []mcpgo.Tool) []mcpgo.Tool {
	if who.Identity == "" {
		return tools
	}
	out := make([]mcpgo.Tool, 0, len(tools))
	for _, tl := range tools {
		for _, op := range services.MCPOperations() {
			if op.MCPTool == tl.Name && op.AllowedFor(who) {
				out = append(out, tl)
			}
		}
	}
	return out
}

// HTTPHandler serves MCP over Streamable HTTP, stateless: no session id,
// every request stands alone and carries its own bearer token. The gate
// (http.go) answers what the MCP library should not see. No GET stream is
// offered (WithDisableStreaming); a POST's answer becomes an SSE stream only
// for a waiting call that sends progress (progress.go).
func HTTPHandler(forum *services.Forum, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.Default()
	}
	return newGate(forum, logger, New(forum, logger), nil)
}

// ServeStdio serves MCP over in and out, acting as token, until in closes
// or ctx ends. A token that does not authenticate is refused before
// anything is served (the returned error is the refusal). Nothing but
// JSON-RPC is written to out: logs go to logger.
//
// The session pushes what opens for the caller (push.go): the inbox
// resource's updates to a client that subscribes, and with WithChannel
// Claude Code's channel events.
func ServeStdio(ctx context.Context, forum *services.Forum, token string, in io.Reader, out io.Writer, logger *slog.Logger, opts ...StdioOption) error {
	if logger == nil {
		logger = slog.Default()
	}
	who, err := forum.Authenticate(ctx, token)
	if err != nil {
		return err
	}
	var cfg stdioConfig
	for _, o := range opts {
		o(&cfg)
	}
	push := newPush(forum, who, logger, cfg.channel)
	srv := build(forum, logger, push)
	if err := push.attach(ctx, srv); err != nil {
		return err
	}
	stdio := mcpserver.NewStdioServer(srv)
	stdio.SetErrorLogger(log.New(slogWriter{logger}, "", 0))
	stdio.SetContextFunc(func(ctx context.Context) context.Context { return withToken(ctx, token) })
	in, out = screenStdio(ctx, in, out, forum.Limits().RequestMaxBytes, logger)
	return stdio.Listen(ctx, in, out)
}

// slogWriter sends the stdio transport's own log lines to slog.
type slogWriter struct{ log *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	w.log.Warn("mcp stdio", "msg", string(p))
	return len(p), nil
}

// StdioOption configures a stdio session.
type StdioOption func(*stdioConfig)

type stdioConfig struct{ channel bool }

// WithChannel declares Claude Code's experimental claude/channel
// capability and pushes a channel event for every turn that opens for the
// caller (push.go). Off unless asked for: `parley mcp --channel`.
func WithChannel() StdioOption { return func(c *stdioConfig) { c.channel = true } }
