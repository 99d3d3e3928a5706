package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// benchClient makes one agent's calls over HTTP or MCP.
type benchClient struct {
	base string
	mcp  bool
}

func newBenchClient(base string, overMCP bool) benchClient {
	return benchClient{base: base, mcp: overMCP}
}

func (c benchClient) transport() string {
	if c.mcp {
		return "mcp"
	}
	return "http"
}

// agentClient is one agent's connection: its own keep-alive HTTP client,
// or its own MCP client session.
type agentClient struct {
	base, token string
	http        *http.Client
	mcp         *mcpClient
	initialized bool
}

func (c benchClient) forAgent(token string) *agentClient {
	a := &agentClient{base: c.base, token: token, http: &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 2, DisableCompression: true},
	}}
	if c.mcp {
		a.mcp = newMCPClient(c.base, token, a.http)
	}
	return a
}

// call is one operation: an HTTP route, or the MCP tool of the same
// operation with the merged arguments. It returns the decoded answer and
// the HTTP status (MCP: 200, or 409 for a tool refusal of that status).
func (a *agentClient) call(ctx context.Context, tool, method, path string, args map[string]any, header http.Header) (int, map[string]any, http.Header, error) {
	if a.mcp != nil {
		return a.callTool(ctx, tool, args)
	}
	var body io.Reader
	if method == "POST" {
		raw, _ := json.Marshal(args)
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, body)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 400 && !decodeAnswer(path) {
		// The client shares the machine with the server: it reads what a
		// read returns but spends no time decoding it.
		_, err := io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil, resp.Header, err
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, resp.Header, err
	}
	var out map[string]any
	if len(raw) > 0 && json.Unmarshal(raw, &out) != nil {
		return resp.StatusCode, nil, resp.Header, fmt.Errorf("%d: not JSON", resp.StatusCode)
	}
	return resp.StatusCode, out, resp.Header, nil
}

func (a *agentClient) callTool(ctx context.Context, tool string, args map[string]any) (int, map[string]any, http.Header, error) {
	if !a.initialized {
		if err := a.mcp.initialize(ctx, "parley-bench", "1"); err != nil {
			return 0, nil, nil, err
		}
		a.initialized = true
	}
	res, err := a.mcp.callTool(ctx, tool, args)
	if err != nil {
		return 0, nil, nil, err
	}
	var out map[string]any
	json.Unmarshal(res.Structured, &out)
	if res.IsError {
		status, _ := dig(out, "error", "status").(float64)
		return int(status), out, nil, nil
	}
	return 200, out, nil, nil
}

// decodeAnswer says which answers the bench needs to look into: the
// pages it follows by cursor, and posts (for a new hot thread).
func decodeAnswer(path string) bool {
	return !strings.HasPrefix(path, "/api/v1/threads/")
}

// worker is one agent running one operation.
type worker struct {
	st     *stage
	agent  benchAgent
	client *agentClient
	n      int
	seq    int
	cursor string
	etag   string
	rng    *rand.Rand
	waiter *agentClient // deliver: this agent's client at the second server
	poster *agentClient // deliver: the neighbour's client at the first server
}

// loop repeats the operation until ctx ends, timing each call. Errors are
// counted by status (or "network"); a refusal the operation expects (a
// full hot thread) is handled, not counted.
func (w *worker) loop(ctx context.Context, op string) ([]time.Duration, map[string]int) {
	w.rng = rand.New(rand.NewPCG(uint64(w.n), 42))
	var lat []time.Duration
	errs := map[string]int{}
	if op == "deliver" {
		for ctx.Err() == nil {
			took, err := w.deliver(ctx, w.poster)
			switch {
			case ctx.Err() != nil:
			case err != nil:
				errs["deliver"]++
			default:
				lat = append(lat, took)
			}
		}
		return lat, errs
	}
	for ctx.Err() == nil {
		start := time.Now()
		status, out, header, err := w.once(ctx, op)
		took := time.Since(start)
		switch {
		case ctx.Err() != nil:
			return lat, errs
		case err != nil:
			errs["network"]++
		case status >= 400:
			if reason := dig(out, "error", "reason"); op == "hot" && (reason == "limit_exceeded" || reason == "loop_suspected") {
				// full, or paused by the guard after guard_thread_run_max
				// model messages: the next hot thread
				w.newHotThread(ctx)
				continue
			}
			errs[strconv.Itoa(status)]++
		default:
			lat = append(lat, took)
			w.remember(op, out, header)
		}
	}
	return lat, errs
}

func (w *worker) once(ctx context.Context, op string) (int, map[string]any, http.Header, error) {
	w.seq++
	note := func(thread string) map[string]any {
		return map[string]any{"kind": "note", "thread": thread, "body": fmt.Sprintf("agent %d, note %d.%d: a measured remark", w.n, w.st.round, w.seq),
			"from": map[string]any{"extension": fmt.Sprintf("w%d", w.seq%4)}}
	}
	switch op {
	case "posts":
		return w.client.call(ctx, "post", "POST", "/api/v1/messages", note(w.st.threads[w.rng.IntN(len(w.st.threads))]), nil)
	case "hot":
		return w.client.call(ctx, "post", "POST", "/api/v1/messages", note(w.st.hot.get()), nil)
	case "read", "read304":
		var h http.Header
		if op == "read304" && w.etag != "" {
			h = http.Header{"If-None-Match": {w.etag}}
		}
		return w.client.call(ctx, "read_thread", "GET", "/api/v1/threads/"+w.st.big, map[string]any{"thread": w.st.big}, h)
	case "inbox":
		return w.client.call(ctx, "inbox", "GET", "/api/v1/inbox?limit=50&since="+w.cursor, withCursor("since", w.cursor), nil)
	case "list":
		return w.client.call(ctx, "list_threads", "GET", "/api/v1/threads?limit=50&cursor="+w.cursor, withCursor("cursor", w.cursor), nil)
	}
	return 0, nil, nil, errors.New("unknown operation " + op)
}

func withCursor(name, cursor string) map[string]any {
	args := map[string]any{"limit": 50}
	if cursor != "" {
		args[name] = cursor
	}
	return args
}

// remember keeps what the next call needs: the cursor to page on (back to
// the start at the end), the ETag to send.
func (w *worker) remember(op string, out map[string]any, header http.Header) {
	switch op {
	case "inbox":
		if items, _ := out["items"].([]any); len(items) == 0 {
			w.cursor = ""
		} else {
			w.cursor, _ = out["cursor"].(string)
		}
	case "list":
		w.cursor, _ = out["cursor"].(string)
	case "read304":
		if e := header.Get("ETag"); e != "" {
			w.etag = e
		}
	}
}

func (w *worker) newHotThread(ctx context.Context) {
	full := w.st.hot.get()
	_, out, _, err := w.client.call(ctx, "post", "POST", "/api/v1/messages", map[string]any{"kind": "ask", "body": fmt.Sprintf("The next hot thread (agent %d).", w.n)}, nil)
	if id, _ := dig(out, "thread", "id").(string); err == nil && id != "" {
		w.st.hot.replace(full, id)
	}
}
