package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"parley/services"
)

// Resource is the protected resource's side of OAuth (package oauth): it
// resolves an access token and words the challenges.
type Resource interface {
	Authenticate(ctx context.Context, bearer string) (services.Caller, error)
	// Challenge is the WWW-Authenticate of a 401, naming the resource
	// metadata; errCode is "" when no token was sent.
	Challenge(errCode, description string) string
	// InsufficientScope is the WWW-Authenticate of a 403.
	InsufficientScope(scope, description string) string
}

// OAuthHandler serves MCP at /mcp/oauth: the same tools and services as
// HTTPHandler, for callers holding an OAuth access token from res.
//
// The two endpoints differ only at the gate. /mcp takes a Parley token and
// advertises no OAuth discovery; /mcp/oauth takes only access tokens, and
// answers a request without one 401 with WWW-Authenticate naming its
// protected-resource metadata, where an OAuth client starts. They are
// apart because some clients (Cursor) drop the headers they were
// configured with as soon as a server advertises OAuth discovery: /mcp
// never does, so a static token keeps working there.
func OAuthHandler(forum *services.Forum, logger *slog.Logger, res Resource) http.Handler {
	if logger == nil {
		logger = slog.Default()
	}
	return newGate(forum, logger, New(forum, logger), res)
}

// authenticateOAuth admits the bearer of an access token, or answers 401
// with the challenge: without a token as with a bad one, since /mcp/oauth
// serves nothing to an anonymous caller.
func (g gate) authenticateOAuth(w mcpserver.HTTPResponseWriter, ctx context.Context, token string, present bool, body []byte) (services.Caller, bool) {
	id, _, _ := head(body)
	if !present || token == "" {
		w.Header().Set("WWW-Authenticate", g.oauth.Challenge("", ""))
		ref := services.Refuse(services.TokenMissing, "this endpoint takes an OAuth access token: send Authorization: Bearer <access token>")
		write(w, rpcError(id, mcpgo.INVALID_REQUEST, http.StatusUnauthorized, ref.Message, ref))
		return services.Caller{}, false
	}
	who, err := g.oauth.Authenticate(ctx, token)
	if err != nil {
		ref, unexpected := services.AsRefusal(err)
		if unexpected {
			g.faults.Report(ctx, "mcp: oauth authenticate", err, ref)
		}
		if ref.Status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", g.oauth.Challenge("invalid_token", ref.Message))
		}
		write(w, rpcError(id, mcpgo.INVALID_REQUEST, ref.Status, ref.Message, ref))
		return services.Caller{}, false
	}
	return who, true
}

// insufficientScope turns a tool call's token_right_missing into what
// OAuth says of it (RFC 6750 §3.1): 403 with error="insufficient_scope"
// and the right the call needs as scope, so that a client can ask the
// human for more. The protocol's refusal rides in the JSON-RPC error's
// data. It returns false for every other answer.
func (g gate) insufficientScope(w mcpserver.HTTPResponseWriter, request, answer []byte) bool {
	var res struct {
		Result struct {
			IsError           bool                 `json:"isError"`
			StructuredContent services.RefusalBody `json:"structuredContent"`
		} `json:"result"`
	}
	if json.Unmarshal(answer, &res) != nil || !res.Result.IsError || res.Result.StructuredContent.Error == nil ||
		res.Result.StructuredContent.Error.Reason != services.TokenRightMissing {
		return false
	}
	ref := res.Result.StructuredContent.Error
	id, _, args := head(request)
	w.Header().Set("WWW-Authenticate", g.oauth.InsufficientScope(neededScope(request, args), ref.Message))
	write(w, rpcError(id, mcpgo.INVALID_REQUEST, http.StatusForbidden, ref.Message, ref))
	return true
}

// neededScope is the right a tool call needs: the operation's, or verify
// for a post of kind verify.
func neededScope(request []byte, args map[string]json.RawMessage) string {
	var call struct {
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	json.Unmarshal(request, &call)
	var kind string
	json.Unmarshal(args["kind"], &kind)
	if call.Params.Name == string(services.OpPost) && kind == "verify" {
		return string(services.RightVerify)
	}
	for _, op := range services.Operations {
		if op.MCPTool == call.Params.Name && op.MCPTool != "" {
			switch op.Right {
			case services.NeedRead, services.NeedWrite:
				return string(op.Right)
			case services.NeedLockOrHuman:
				return string(services.RightLock)
			}
		}
	}
	return string(services.RightWrite)
}
