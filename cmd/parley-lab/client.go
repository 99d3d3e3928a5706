package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"parley/services"
)

// The lab's agents — the bench's and the simulation's — reach the server
// like any client: over the HTTP binding, or over MCP's Streamable HTTP.
// Both take the same operation names and the same merged arguments
// (docs/protocol.md §2.1), so the callers do not know which one carries
// them.

// agentClient is one agent's connection: its token, its own keep-alive
// HTTP client and, over MCP, its own client session.
type agentClient struct {
	base, token string
	http        *http.Client
	mcp         *mcpClient // nil: the HTTP binding
	name        string     // clientInfo's name over MCP
	initialized bool
}

// newAgentClient makes one agent's client at base, over MCP when overMCP.
// name is what the MCP client calls itself.
func newAgentClient(base, token string, hc *http.Client, overMCP bool, name string) *agentClient {
	a := &agentClient{base: base, token: token, http: hc, name: name}
	if overMCP {
		a.mcp = newMCPClient(base, token, hc)
	}
	return a
}

// transport names the binding, for reports.
func (a *agentClient) transport() string {
	if a.mcp != nil {
		return "mcp"
	}
	return "http"
}

// reply is one call's answer. A refusal is an answer, not an error.
type reply struct {
	status  int            // HTTP status; over MCP 200, or the refusal's status
	body    map[string]any // nil when the call discarded it
	header  http.Header    // over HTTP only
	refusal *wireRefusal
}

// callOption changes one call.
type callOption func(*callOptions)

type callOptions struct {
	header  http.Header
	discard bool
}

// withHeader sends extra HTTP headers (If-None-Match); MCP has none.
func withHeader(h http.Header) callOption { return func(o *callOptions) { o.header = h } }

// discardBody reads a successful HTTP answer but spends no time decoding
// it: the bench's client shares the machine with the server.
func discardBody() callOption { return func(o *callOptions) { o.discard = true } }

// call runs one operation with its arguments; err is only for a transport
// that failed or an answer that is not the protocol's.
func (a *agentClient) call(ctx context.Context, op string, args map[string]any, opts ...callOption) (reply, error) {
	var o callOptions
	for _, opt := range opts {
		opt(&o)
	}
	if a.mcp != nil {
		return a.callTool(ctx, op, args)
	}
	return a.callHTTP(ctx, op, args, o)
}

// do is call for callers that read only the body and the refusal.
func (a *agentClient) do(ctx context.Context, op string, args map[string]any) (map[string]any, *wireRefusal, error) {
	r, err := a.call(ctx, op, args)
	return r.body, r.refusal, err
}

// callHTTP is the HTTP binding: the operation's route from
// services.Operations, path parameters in the path, the rest in the query
// (GET) or the JSON body (POST).
func (a *agentClient) callHTTP(ctx context.Context, op string, args map[string]any, o callOptions) (reply, error) {
	spec, ok := operation(op)
	if !ok {
		return reply{}, fmt.Errorf("no operation %s", op)
	}
	path, query, body := spec.Path, url.Values{}, map[string]any{}
	for k, v := range args {
		s := fmt.Sprint(v)
		switch {
		case strings.Contains(path, "{"+k+"}"):
			path = strings.Replace(path, "{"+k+"}", url.PathEscape(s), 1)
		case spec.Method == "GET":
			query.Set(k, s)
		default:
			body[k] = v
		}
	}
	var rd io.Reader
	if spec.Method == "POST" {
		raw, err := json.Marshal(body)
		if err != nil {
			return reply{}, err
		}
		rd = bytes.NewReader(raw)
	}
	target := a.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, spec.Method, target, rd)
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range o.header {
		req.Header[k] = v
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, header: resp.Header}
	if resp.StatusCode < 400 && (o.discard || resp.StatusCode == http.StatusNotModified) {
		_, err := io.Copy(io.Discard, resp.Body)
		return r, err
	}
	if err := json.NewDecoder(resp.Body).Decode(&r.body); err != nil {
		return r, fmt.Errorf("%s: status %d, undecodable answer: %w", op, resp.StatusCode, err)
	}
	if resp.StatusCode >= 400 {
		if r.refusal = refusalOf(r.body); r.refusal == nil {
			return r, fmt.Errorf("%s: status %d without a refusal", op, resp.StatusCode)
		}
	}
	return r, nil
}

// connect opens the MCP session (the server keeps none) the first time;
// over HTTP there is nothing to open.
func (a *agentClient) connect(ctx context.Context) error {
	if a.mcp == nil || a.initialized {
		return nil
	}
	if err := a.mcp.initialize(ctx, a.name, services.Version); err != nil {
		return fmt.Errorf("mcp initialize: %w", err)
	}
	a.initialized = true
	return nil
}

// callTool is the MCP binding: the tool of the same name, initialized once
// per agent; each call is a stateless POST /mcp carrying the agent's token.
func (a *agentClient) callTool(ctx context.Context, op string, args map[string]any) (reply, error) {
	if err := a.connect(ctx); err != nil {
		return reply{}, err
	}
	res, err := a.mcp.callTool(ctx, op, args)
	if err != nil {
		return reply{}, err
	}
	r := reply{status: http.StatusOK}
	if err := json.Unmarshal(res.Structured, &r.body); err != nil || r.body == nil {
		return r, fmt.Errorf("%s: no structured content", op)
	}
	if res.IsError {
		if r.refusal = refusalOf(r.body); r.refusal == nil {
			return r, fmt.Errorf("%s: isError without a refusal", op)
		}
		r.status = r.refusal.Status
	}
	return r, nil
}

// operation finds an operation of the manifest by name.
func operation(name string) (services.Operation, bool) {
	for _, o := range services.Operations {
		if string(o.Name) == name {
			return o, true
		}
	}
	return services.Operation{}, false
}

// wireRefusal is the refusal object of docs/protocol.md §2.2 as it arrives.
type wireRefusal struct {
	Reason     string `json:"reason"`
	Status     int    `json:"status"`
	Message    string `json:"message"`
	Field      string `json:"field"`
	RetryAfter int    `json:"retry_after"`
}

// refusalOf reads {"error": {...}} from an answer, or nil.
func refusalOf(body map[string]any) *wireRefusal {
	e, ok := body["error"]
	if !ok {
		return nil
	}
	raw, _ := json.Marshal(e)
	var r wireRefusal
	if json.Unmarshal(raw, &r) != nil || r.Reason == "" {
		return nil
	}
	return &r
}

// Small readers of decoded answers.

func dig(v any, path ...string) any {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func digString(v any, path ...string) string {
	s, _ := dig(v, path...).(string)
	return s
}

func digList(v any, path ...string) []any {
	l, _ := dig(v, path...).([]any)
	return l
}
