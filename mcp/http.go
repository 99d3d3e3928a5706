package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"parley/services"
)

// gate is the front of the Streamable HTTP transport. Every request gets a
// JSON-RPC answer, whatever is wrong with it:
//
//   - POST only: any other method is 405 with Allow: POST (stateless, the
//     server opens no stream for GET and has no session to DELETE);
//   - an Origin that is not the server's own is 403, as the MCP transport
//     requires against DNS rebinding and foreign pages;
//   - an Authorization header whose token is unknown or revoked is 401 with
//     WWW-Authenticate: Bearer on every request, initialize and tools/list
//     included; without Authorization, a call of a tool that needs a token
//     is 401 token_missing too (tokenNeeded), and the rest is admitted;
//   - at /mcp/oauth (oauth.go) only an OAuth access token is admitted:
//     none, or a bad one, is 401 with WWW-Authenticate naming the resource
//     metadata, and token_right_missing is 403 insufficient_scope;
//   - the body must be application/json and pass screen (strict.go);
//   - whatever the MCP library still answers in plain text becomes a
//     JSON-RPC error (see plainErrors).
type gate struct {
	forum *services.Forum
	next  http.Handler
	log   *slog.Logger
	oauth Resource // set for /mcp/oauth (oauth.go): access tokens only
}

func (g gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		write(w, rpcError(nil, mcpgo.INVALID_REQUEST, http.StatusMethodNotAllowed,
			"this server is stateless and streams nothing: POST each JSON-RPC message to this address (GET opens no stream, DELETE ends no session)", nil))
		return
	}
	if !sameOrigin(r) {
		write(w, rpcError(nil, mcpgo.INVALID_REQUEST, http.StatusForbidden, "requests from another origin are refused (Origin must be this server's own)", nil))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxMessageBytes+1))
	if err != nil {
		write(w, rpcError(nil, mcpgo.INVALID_REQUEST, http.StatusBadRequest, "the request body could not be read", nil))
		return
	}
	if len(body) > MaxMessageBytes {
		r := services.Refuse(services.InvalidBody, "a message may be at most %d bytes; this one was not read", MaxMessageBytes)
		r.Status = http.StatusRequestEntityTooLarge
		write(w, rpcError(nil, mcpgo.INVALID_REQUEST, r.Status, r.Message, r))
		return
	}
	var who services.Caller
	token, present := bearer(r)
	if g.oauth != nil {
		var ok bool
		if who, ok = g.authenticateOAuth(w, r, body); !ok {
			return
		}
	} else if present {
		who, err = g.forum.Authenticate(r.Context(), token)
		if token == "" {
			err = services.Refuse(services.TokenInvalid, "Authorization must be Bearer <token>")
		}
		if err != nil {
			g.refuseToken(w, r, body, err)
			return
		}
	}
	if ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/json" {
		write(w, rpcError(nil, mcpgo.INVALID_REQUEST, http.StatusUnsupportedMediaType, "Content-Type must be application/json", nil))
		return
	}
	if v := screen(body, g.forum.Limits().RequestMaxBytes); v != nil {
		write(w, v)
		return
	}
	if !present && g.oauth == nil {
		if ref := tokenNeeded(r.Context(), g.forum, body); ref != nil {
			g.refuseToken(w, r, body, ref)
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var scoped func(answer []byte) bool
	if g.oauth != nil {
		scoped = func(answer []byte) bool { return g.insufficientScope(w, body, answer) }
	}
	plainErrors(w, r.WithContext(withCaller(r.Context(), who)), body, g.next, scoped)
}

// refuseToken answers a request whose token does not authenticate: 401
// with the challenge for token_invalid, 503 or 500 when the check itself
// failed. The refusal object rides in the JSON-RPC error's data.
func (g gate) refuseToken(w http.ResponseWriter, r *http.Request, body []byte, err error) {
	ref, unexpected := services.AsRefusal(err)
	if unexpected {
		g.log.ErrorContext(r.Context(), "mcp: authenticate", "err", err)
	}
	switch {
	case ref.Reason == services.TokenMissing:
		// RFC 6750 §3.1: a request with no credentials gets no error code.
		w.Header().Set("WWW-Authenticate", `Bearer realm="parley"`)
	case ref.Status == http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="parley", error="invalid_token", error_description="the token is unknown or revoked"`)
	}
	id, _, _ := head(body)
	write(w, rpcError(id, mcpgo.INVALID_REQUEST, ref.Status, ref.Message, ref))
}

// sameOrigin reports whether a request carries no Origin (it comes from no
// browser page) or the server's own.
//
// Reading: the MCP transport says a server MUST validate Origin and answer
// 403 to an invalid one, without saying which are valid. Here only the
// server's own origin is: Parley serves no cross-origin requests (no CORS),
// so a page of another origin has no business at /mcp. A page that reaches
// the server under a rebound name of its own passes this check; it still
// holds no token, and without one nothing but get_manifest answers.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

func write(w http.ResponseWriter, v *verdict) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(v.status)
	w.Write(v.body)
}

// plainErrors runs the MCP library and keeps its answer, tidied (tidy.go),
// unless it is an HTTP error in plain text (an unsupported protocol version
// header, say): that becomes a JSON-RPC error with the same status and
// message. A JSON answer is small, so holding it back costs nothing; an
// answer the library turns into an SSE stream (a waiting call sending
// progress, progress.go) passes through as it is written.
//
// answered, when set, may answer instead, from the library's tidied answer
// (the 403 of insufficientScope); it returns whether it did.
func plainErrors(w http.ResponseWriter, r *http.Request, body []byte, next http.Handler, answered func([]byte) bool) {
	rec := &recorder{w: w, header: http.Header{}, status: http.StatusOK}
	next.ServeHTTP(rec, r)
	if rec.streaming {
		return
	}
	ct, _, _ := mime.ParseMediaType(rec.header.Get("Content-Type"))
	if rec.status >= 400 && ct != "application/json" {
		id, _, _ := head(body)
		write(w, rpcError(id, mcpgo.INVALID_REQUEST, rec.status, strings.TrimSpace(rec.body.String()), nil))
		return
	}
	out := tidy(rec.body.Bytes())
	if answered != nil && answered(out) {
		return
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	if len(out) != rec.body.Len() {
		w.Header().Del("Content-Length")
	}
	w.WriteHeader(rec.status)
	w.Write(out)
}

// recorder holds an answer back (see plainErrors), unless the library
// answers with text/event-stream: then it writes through to w, flushing
// when the library does. Being an http.Flusher is what lets the library
// stream at all; it streams a POST's answer only when a tool sends a
// notification, which only a waiting call does (progress.go). A stream
// carries JSON-RPC messages the library wrote from Go values, never a
// plain-text error, so there is nothing to tidy in it.
type recorder struct {
	w         http.ResponseWriter
	header    http.Header
	status    int
	body      bytes.Buffer
	wrote     bool
	streaming bool
}

func (rec *recorder) Header() http.Header { return rec.header }

func (rec *recorder) WriteHeader(status int) {
	if rec.wrote {
		return
	}
	rec.status, rec.wrote = status, true
	if ct, _, _ := mime.ParseMediaType(rec.header.Get("Content-Type")); ct == "text/event-stream" {
		rec.streaming = true
		for k, v := range rec.header {
			rec.w.Header()[k] = v
		}
		rec.w.WriteHeader(status)
	}
}

func (rec *recorder) Write(p []byte) (int, error) {
	rec.WriteHeader(http.StatusOK)
	if rec.streaming {
		return rec.w.Write(p)
	}
	return rec.body.Write(p)
}

func (rec *recorder) Flush() {
	if rec.streaming {
		http.NewResponseController(rec.w).Flush()
	}
}

// tokenNeeded is the refusal of a message sent without a token that needs
// one: a call of any tool but those the operation table lets anyone call
// (get_manifest). docs/protocol.md §2.1 (errata 2) answers a missing
// token at the HTTP level, 401.
//
// Reading: the same section says get_manifest needs no token, so the
// messages that let a client find that out stay open without one —
// initialize, tools/list, ping, notifications, resources (the schemas),
// and the call of get_manifest; every other tool call is the "missing
// token" the errata answers with 401.
func tokenNeeded(ctx context.Context, forum *services.Forum, body []byte) error {
	if _, method, _ := head(body); method != "tools/call" {
		return nil
	}
	var m struct {
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return nil // screen's business: answered as the MCP library answers it
	}
	for _, op := range services.MCPOperations() {
		if op.MCPTool == m.Params.Name {
			if op.Right == services.NeedNothing {
				return nil
			}
			return forum.Meter(ctx, services.Caller{}, op.Name) // the services' token_missing
		}
	}
	return nil // an unknown tool: the library says so
}
