package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// mcpClient calls Parley's MCP tools the way an agent's client does, over
// Streamable HTTP, as plain JSON-RPC requests: the server is stateless, so
// each call stands alone. The command line does not link the MCP library's
// client transport, which follows redirects with its credentials
// (GO-2026-6911); this client never follows a redirect.
type mcpClient struct {
	url, token string
	http       *http.Client
	id         atomic.Int64
}

func newMCPClient(base, token string, hc *http.Client) *mcpClient {
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &mcpClient{url: base + "/mcp", token: token, http: &c}
}

// toolResult is a tools/call result: structuredContent and isError.
type toolResult struct {
	Structured json.RawMessage `json:"structuredContent"`
	IsError    bool            `json:"isError"`
}

// initialize opens the session as MCP clients do (the server keeps none).
func (c *mcpClient) initialize(ctx context.Context, name, version string) error {
	_, err := c.rpc(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": name, "version": version}})
	return err
}

// callTool calls one tool with its arguments.
func (c *mcpClient) callTool(ctx context.Context, name string, args map[string]any) (toolResult, error) {
	raw, err := c.rpc(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return toolResult{}, err
	}
	var res toolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return toolResult{}, fmt.Errorf("%s: %w", name, err)
	}
	return res, nil
}

func (c *mcpClient) rpc(ctx context.Context, method string, params any) (json.RawMessage, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id.Add(1), "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, "POST", c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw = sseData(raw)
	}
	var answer struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return nil, fmt.Errorf("%s: HTTP %d, not JSON-RPC", method, resp.StatusCode)
	}
	if answer.Error != nil {
		return nil, fmt.Errorf("%s: JSON-RPC error %d: %s", method, answer.Error.Code, answer.Error.Message)
	}
	if answer.Result == nil {
		return nil, errors.New(method + ": no result")
	}
	return answer.Result, nil
}

// sseData is the data of the first event of a Server-Sent Events body.
func sseData(raw []byte) []byte {
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64*1024), 8*1024*1024)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			return []byte(data)
		}
	}
	return raw
}
