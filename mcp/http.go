package mcp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"parley/internal/faultlog"
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
	forum  *services.Forum
	next   *mcpserver.StreamableHTTPServer
	tools  handlers      // next's tool handlers, for the calls the gate serves itself (direct.go); nil: none
	served *atomic.Int64 // when set, counts the calls the gate served itself (tests)
	log    *slog.Logger
	faults *faultlog.Log // the authentications that failed for a fault
	oauth  Resource      // set for /mcp/oauth (oauth.go): access tokens only
}

// newGate is the gate in front of the library's stateless Streamable HTTP
// transport of srv.
func newGate(forum *services.Forum, logger *slog.Logger, srv *mcpserver.MCPServer, oauth Resource) gate {
	return gate{forum: forum, log: logger, faults: faultlog.New(logger), oauth: oauth, tools: handlersOf(srv), next: mcpserver.NewStreamableHTTPServer(srv,
		mcpserver.WithStateLess(true),
		mcpserver.WithDisableStreaming(true),
		mcpserver.WithStreamableHTTPLogger(logger),
	)}
}

// ServeHTTP serves the transport to a net/http server.
func (g gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := &mcpserver.HTTPRequest{Method: r.Method, URL: &url.URL{Host: r.Host, Path: r.URL.Path}, Header: r.Header, Context: r.Context()}
	var readErr error
	if r.Method == http.MethodPost {
		req.Body, readErr = io.ReadAll(io.LimitReader(r.Body, MaxMessageBytes+1))
	}
	g.serve(netWriter{w}, req, readErr)
}

// Handle serves the transport to an HTTP server that is not net/http (the
// web package's Fiber): r.Body is the whole body, r.URL.Host the request's
// Host. It answers on w as it can: a call that sends progress streams only
// when w.CanStream().
func (g gate) Handle(w mcpserver.HTTPResponseWriter, r *mcpserver.HTTPRequest) {
	g.serve(w, r, nil)
}

func (g gate) serve(w mcpserver.HTTPResponseWriter, r *mcpserver.HTTPRequest, readErr error) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		write(w, rpcError(nil, mcpgo.INVALID_REQUEST, http.StatusMethodNotAllowed,
			"this server is stateless and streams nothing: POST each JSON-RPC message to this address (GET opens no stream, DELETE ends no session)", nil))
		return
	}
	host := ""
	if r.URL != nil {
		host = r.URL.Host
	}
	if !sameOrigin(r.Header.Get("Origin"), host) {
		write(w, rpcError(nil, mcpgo.INVALID_REQUEST, http.StatusForbidden, "requests from another origin are refused (Origin must be this server's own)", nil))
		return
	}
	if readErr != nil {
		write(w, rpcError(nil, mcpgo.INVALID_REQUEST, http.StatusBadRequest, "the request body could not be read", nil))
		return
	}
	body := r.Body
	if len(body) > MaxMessageBytes {
		r := services.Refuse(services.InvalidBody, "a message may be at most %d bytes; this one was not read", MaxMessageBytes)
		r.Status = http.StatusRequestEntityTooLarge
		write(w, rpcError(nil, mcpgo.INVALID_REQUEST, r.Status, r.Message, r))
		return
	}
	ctx := r.Context
	if ctx == nil {
		ctx = context.Background()
	}
	// The checks that read nothing come after the token's in the answer
	// (a bad token is 401 whatever else is wrong), but are made first: a
	// message that passes them and calls a tool is admitted and counted in
	// one statement, as the HTTP binding admits a request (services.Admit),
	// rather than authenticated here and counted again by the tool.
	refused, msg := checkMessage(r.Header, body, g.forum.Limits().RequestMaxBytes)
	// A call of a tool that answers at once waits for its turn at the
	// database first, as the HTTP binding's requests do
	// (services.Forum.Turn); a waiting read takes none.
	if op, ok := msg.operation(); ok && refused == nil && answersAtOnce(op) {
		release, err := g.forum.Turn(ctx)
		if err != nil {
			g.refuseToken(w, ctx, body, err)
			return
		}
		defer release()
	}
	var who services.Caller
	var admitted *admission
	token, present := bearer(r.Header)
	if g.oauth != nil {
		var ok bool
		if who, ok = g.authenticateOAuth(w, ctx, token, present, body); !ok {
			return
		}
	} else if present {
		var err error
		op, metered := meteredCall(msg)
		switch {
		case token == "":
			err = services.Refuse(services.TokenInvalid, "Authorization must be Bearer <token>")
		case refused == nil && metered:
			who, err = g.forum.Admit(ctx, token, op)
			admitted = &admission{op: op, who: who, err: err}
			if ref := (*services.Refusal)(nil); errors.As(err, &ref) && ref.Reason == services.RateLimited {
				err = nil // the tool's refusal, a tool result (admit, auth.go)
			}
		default:
			who, err = g.forum.Authenticate(ctx, token)
		}
		if err != nil {
			g.refuseToken(w, ctx, body, err)
			return
		}
	}
	if refused != nil {
		write(w, refused)
		return
	}
	if !present && g.oauth == nil {
		if ref := tokenNeeded(ctx, g.forum, msg); ref != nil {
			g.refuseToken(w, ctx, body, ref)
			return
		}
	}
	req := *r
	req.Context = withCaller(ctx, who)
	if admitted != nil {
		req.Context = withAdmission(req.Context, *admitted)
	}
	var scoped func(answer []byte) bool
	if g.oauth != nil {
		scoped = func(answer []byte) bool { return g.insufficientScope(w, body, answer) }
	}
	if g.tools != nil && g.direct(w, &req, msg, scoped) {
		return
	}
	plainErrors(w, &req, body, g.next, scoped)
}

// checkMessage is the answer to a message that is not for the MCP
// library (a Content-Type that is not JSON, or what screen refuses), nil
// when it may go on.
func checkMessage(header http.Header, body []byte, limit int) (*verdict, message) {
	if ct, _, err := mime.ParseMediaType(header.Get("Content-Type")); err != nil || ct != "application/json" {
		return rpcError(nil, mcpgo.INVALID_REQUEST, http.StatusUnsupportedMediaType, "Content-Type must be application/json", nil), message{}
	}
	return screen(body, limit)
}

// netWriter is a net/http ResponseWriter as the MCP library's writer: it
// streams when it can flush.
type netWriter struct{ http.ResponseWriter }

func (w netWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w netWriter) CanStream() bool {
	_, ok := w.ResponseWriter.(http.Flusher)
	return ok
}

// refuseToken answers a request whose token does not authenticate: 401
// with the challenge for token_invalid, 503 or 500 when the check itself
// failed. The refusal object rides in the JSON-RPC error's data.
func (g gate) refuseToken(w mcpserver.HTTPResponseWriter, ctx context.Context, body []byte, err error) {
	ref, unexpected := services.AsRefusal(err)
	if unexpected {
		g.faults.Report(ctx, "mcp: authenticate", err, ref)
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
// browser page) or the server's own, host.
//
// Reading: the MCP transport says a server MUST validate Origin and answer
// 403 to an invalid one, without saying which are valid. Here only the
// server's own origin is: Parley serves no cross-origin requests (no CORS),
// so a page of another origin has no business at /mcp. A page that reaches
// the server under a rebound name of its own passes this check; it still
// holds no token, and without one nothing but get_manifest answers.
func sameOrigin(origin, host string) bool {
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, host)
}

func write(w mcpserver.HTTPResponseWriter, v *verdict) {
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
func plainErrors(w mcpserver.HTTPResponseWriter, r *mcpserver.HTTPRequest, body []byte, next *mcpserver.StreamableHTTPServer, answered func([]byte) bool) {
	rec := &recorder{w: w, header: http.Header{}, status: http.StatusOK}
	next.Handle(rec, r)
	if rec.streaming {
		return
	}
	ct, _, _ := mime.ParseMediaType(rec.header.Get("Content-Type"))
	if rec.status >= 400 && ct != "application/json" {
		id, _, _ := head(body)
		write(w, rpcError(id, mcpgo.INVALID_REQUEST, rec.status, strings.TrimSpace(rec.body.String()), nil))
		return
	}
	reply(w, rec.status, rec.header, rec.body.Bytes(), answered)
}

// reply writes a JSON answer of the library's (or one made as the library
// makes it: direct.go), tidied, unless answered answers instead.
func reply(w mcpserver.HTTPResponseWriter, status int, header http.Header, body []byte, answered func([]byte) bool) {
	out := tidy(body)
	if answered != nil && answered(out) {
		return
	}
	for k, v := range header {
		w.Header()[k] = v
	}
	if len(out) != len(body) {
		w.Header().Del("Content-Length")
	}
	w.WriteHeader(status)
	w.Write(out)
}

// recorder holds an answer back (see plainErrors), unless the library
// answers with text/event-stream: then it writes through to w, flushing
// when the library does. It can stream when w can, and that is what lets
// the library stream at all; it streams a POST's answer only when a tool sends a
// notification, which only a waiting call does (progress.go). A stream
// carries JSON-RPC messages the library wrote from Go values, never a
// plain-text error, so there is nothing to tidy in it.
type recorder struct {
	w         mcpserver.HTTPResponseWriter
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
		rec.w.Flush()
	}
}

func (rec *recorder) CanStream() bool { return rec.w.CanStream() }

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
func tokenNeeded(ctx context.Context, forum *services.Forum, msg message) error {
	if op, metered := meteredCall(msg); metered {
		return forum.Meter(ctx, services.Caller{}, op) // the services' token_missing
	}
	return nil
}

// meteredCall reports whether a message calls a tool whose operation needs
// a token (every one but get_manifest), and which. An unknown tool, a
// message the library cannot read: not, as the library answers them.
func meteredCall(msg message) (services.OpName, bool) {
	op, ok := msg.operation()
	if !ok || op.Right == services.NeedNothing {
		return "", false
	}
	return op.Name, true
}

// Immediate reports whether a message calls a tool that answers at once:
// any but the waiting reads (inbox, get_events; waitingTools). Its answer
// is one JSON response, never a stream of progress, so an HTTP server may
// serve it without streaming (Handle with a writer that cannot) and need
// not watch its client while it runs. Any other message, one that may
// wait or one this cannot read, is not.
func Immediate(body []byte) bool {
	op, ok := peek(body).operation()
	return ok && answersAtOnce(op)
}

// answersAtOnce reports whether a tool's call never waits (see Immediate).
func answersAtOnce(op services.Operation) bool { return waitingTools[op.Name] == "" }
