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

// The simulation's agents reach the server like any client: over the HTTP
// binding, or over MCP's Streamable HTTP. Both take the same operation
// names and the same merged arguments (PARLEY.md §2.1), so the scenarios do
// not know which one carries them.

// apiClient calls one operation as one agent. A refusal is an answer, not
// an error: err is only for a transport that failed.
type apiClient interface {
	call(ctx context.Context, op string, args map[string]any) (map[string]any, *wireRefusal, error)
	close()
}

// wireRefusal is the refusal object of PARLEY.md §2.2 as it arrives.
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

// httpAPI is the HTTP binding: the operation's route from
// services.Operations, path parameters in the path, the rest in the query
// (GET) or the JSON body (POST).
type httpAPI struct {
	base, token string
	http        *http.Client
}

func (c *httpAPI) call(ctx context.Context, op string, args map[string]any) (map[string]any, *wireRefusal, error) {
	var spec services.Operation
	for _, o := range services.Operations {
		if o.Name == op {
			spec = o
		}
	}
	if spec.Name == "" {
		return nil, nil, fmt.Errorf("no operation %s", op)
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
			return nil, nil, err
		}
		rd = bytes.NewReader(raw)
	}
	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, spec.Method, target, rd)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, nil, fmt.Errorf("%s: status %d, undecodable answer: %w", op, resp.StatusCode, err)
	}
	if resp.StatusCode >= 400 {
		if r := refusalOf(out); r != nil {
			return nil, r, nil
		}
		return nil, nil, fmt.Errorf("%s: status %d without a refusal", op, resp.StatusCode)
	}
	return out, nil, nil
}

func (c *httpAPI) close() {}

// mcpAPI is the MCP binding: one initialized client per agent, each tool
// call a stateless POST /mcp carrying the agent's token.
type mcpAPI struct {
	c *mcpClient
}

func newMCPAPI(ctx context.Context, base, token string, hc *http.Client) (*mcpAPI, error) {
	c := newMCPClient(base, token, hc)
	if err := c.initialize(ctx, "parley-simulate", services.Version); err != nil {
		return nil, fmt.Errorf("mcp initialize: %w", err)
	}
	return &mcpAPI{c: c}, nil
}

func (m *mcpAPI) call(ctx context.Context, op string, args map[string]any) (map[string]any, *wireRefusal, error) {
	res, err := m.c.callTool(ctx, op, args)
	if err != nil {
		return nil, nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(res.Structured, &out); err != nil || out == nil {
		return nil, nil, fmt.Errorf("%s: no structured content", op)
	}
	if res.IsError {
		if r := refusalOf(out); r != nil {
			return nil, r, nil
		}
		return nil, nil, fmt.Errorf("%s: isError without a refusal", op)
	}
	return out, nil, nil
}

func (m *mcpAPI) close() {}

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
