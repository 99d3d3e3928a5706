package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Reply is one answer of a server, whichever binding carried it: the
// status (HTTP's, or on MCP the refusal's status, 200 for a success), the
// decoded body (MCP: the tool result's structuredContent) and the bytes.
type Reply struct {
	Status  int
	Body    map[string]any
	Raw     []byte
	IsError bool // MCP: the tool result said isError
	Header  http.Header
	Wire    string // for evidence: what carried it
}

// Reason is the refusal's reason, "" for a success.
func (r Reply) Reason() string { return str(r.Body, "error", "reason") }

// Field is the refusal's field.
func (r Reply) Field() string { return str(r.Body, "error", "field") }

// OK reports a success: no refusal object and a 2xx status.
func (r Reply) OK() bool { return r.Status >= 200 && r.Status < 300 && dig(r.Body, "error") == nil }

func (r Reply) String() string {
	raw := string(r.Raw)
	if len(raw) > 300 {
		raw = raw[:300] + "…"
	}
	return fmt.Sprintf("%s status %d: %s", r.Wire, r.Status, raw)
}

// Binding carries operations to a server. Call takes the operation's
// name (docs/protocol.md §2.1) and its arguments merged into one object, as
// MCP takes them; PostRaw sends an envelope's bytes unchanged, so that the
// kit can test what a JSON library would never write (duplicate keys,
// invalid UTF-8).
type Binding interface {
	Name() string
	Call(token, op string, args map[string]any) (Reply, error)
	PostRaw(token string, raw []byte) (Reply, error)
	Close()
}

var httpClient = &http.Client{Timeout: 2 * time.Minute}

// httpBinding speaks HTTP/JSON (docs/protocol.md §2.1).
type httpBinding struct{ base string }

func (h *httpBinding) Name() string { return "http" }
func (h *httpBinding) Close()       {}

// routes are the operations' HTTP routes, from docs/protocol.md §2.1; a
// {name} in the path takes that argument, the rest go in the query (GET)
// or the JSON body (POST).
var routes = map[string]string{
	"get_manifest":  "GET /api/v1/manifest",
	"whoami":        "GET /api/v1/me",
	"post":          "POST /api/v1/messages",
	"read_thread":   "GET /api/v1/threads/{thread}",
	"list_threads":  "GET /api/v1/threads",
	"inbox":         "GET /api/v1/inbox",
	"get_events":    "GET /api/v1/events",
	"confirm":       "POST /api/v1/threads/{thread}/confirm",
	"get_claim":     "GET /api/v1/claims/{claim}",
	"list_claims":   "GET /api/v1/claims",
	"get_statement": "GET /api/v1/statements/{id}",
	"get_blob":      "GET /api/v1/blobs/{digest}",
}

func (h *httpBinding) Call(token, op string, args map[string]any) (Reply, error) {
	route, ok := routes[op]
	if !ok {
		return Reply{}, fmt.Errorf("no HTTP route for %s", op)
	}
	method, path, _ := strings.Cut(route, " ")
	rest := map[string]any{}
	for k, v := range args {
		rest[k] = v
	}
	for k, v := range args {
		if p := "{" + k + "}"; strings.Contains(path, p) {
			path = strings.ReplaceAll(path, p, url.PathEscape(fmt.Sprint(v)))
			if op != "confirm" {
				delete(rest, k)
			}
		}
	}
	var body io.Reader
	if method == "GET" {
		q := url.Values{}
		for k, v := range rest {
			q.Set(k, fmt.Sprint(v))
		}
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
	} else {
		if op == "confirm" {
			delete(rest, "thread")
		}
		b, err := json.Marshal(rest)
		if err != nil {
			return Reply{}, err
		}
		body = bytes.NewReader(b)
	}
	return h.do(method, path, token, body, "application/json")
}

func (h *httpBinding) PostRaw(token string, raw []byte) (Reply, error) {
	return h.do("POST", "/api/v1/messages", token, bytes.NewReader(raw), "application/json")
}

func (h *httpBinding) do(method, path, token string, body io.Reader, ctype string) (Reply, error) {
	req, err := http.NewRequest(method, h.base+path, body)
	if err != nil {
		return Reply{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return Reply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return Reply{}, err
	}
	r := Reply{Status: resp.StatusCode, Raw: raw, Header: resp.Header, Wire: "HTTP " + method + " " + path}
	if len(raw) > 0 && strings.Contains(resp.Header.Get("Content-Type"), "json") {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			return r, fmt.Errorf("%s: the answer is not a JSON object: %v", r.Wire, err)
		}
	}
	return r, nil
}

// rpc is what both MCP bindings share: JSON-RPC 2.0 requests and the
// decoding of a tools/call result (docs/protocol.md §2, §2.1).
type rpcResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

type toolResult struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// toolReply turns a JSON-RPC answer to tools/call into a Reply.
func toolReply(wire string, httpStatus int, raw []byte) (Reply, error) {
	r := Reply{Raw: raw, Wire: wire}
	var resp rpcResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return r, fmt.Errorf("%s: not a JSON-RPC answer (status %d): %v: %.200s", wire, httpStatus, err, raw)
	}
	if resp.Error != nil {
		// A JSON-RPC error: on Streamable HTTP a token refused at the
		// HTTP level carries the refusal object as data (errata 2).
		r.Status = httpStatus
		if len(resp.Error.Data) > 0 {
			json.Unmarshal(resp.Error.Data, &r.Body)
		}
		if r.Body == nil {
			r.Body = map[string]any{"jsonrpc_error": map[string]any{"code": resp.Error.Code, "message": resp.Error.Message}}
		}
		if r.Status < 400 {
			r.Status = 400
		}
		return r, nil
	}
	var tr toolResult
	if err := json.Unmarshal(resp.Result, &tr); err != nil {
		return r, fmt.Errorf("%s: not a tool result: %v", wire, err)
	}
	r.IsError = tr.IsError
	if len(tr.StructuredContent) > 0 && string(tr.StructuredContent) != "null" {
		if err := json.Unmarshal(tr.StructuredContent, &r.Body); err != nil {
			return r, fmt.Errorf("%s: structuredContent is not an object: %v", wire, err)
		}
	} else if len(tr.Content) > 0 {
		json.Unmarshal([]byte(tr.Content[0].Text), &r.Body)
	}
	r.Status = 200
	if tr.IsError {
		r.Status = int(num(r.Body, "error", "status"))
		if r.Status == 0 {
			r.Status = 500
		}
	}
	return r, nil
}

func callRequest(id int, op string, args json.RawMessage) []byte {
	return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, op, args))
}

// callRequestProgress is a tools/call asking for progress notifications
// under progressToken (params._meta.progressToken).
func callRequestProgress(id int, op string, args json.RawMessage, progressToken string) []byte {
	if progressToken == "" {
		return callRequest(id, op, args)
	}
	return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"progressToken":%q}}}`, id, op, args, progressToken))
}

// mcpHTTP speaks MCP over Streamable HTTP, stateless (POST /mcp).
type mcpHTTP struct {
	base string
	mu   sync.Mutex
	id   int
}

func (m *mcpHTTP) Name() string { return "mcp" }
func (m *mcpHTTP) Close()       {}

func (m *mcpHTTP) Call(token, op string, args map[string]any) (Reply, error) {
	b, err := toolArguments(args)
	if err != nil {
		return Reply{}, err
	}
	return m.raw(token, op, b)
}

func (m *mcpHTTP) PostRaw(token string, raw []byte) (Reply, error) { return m.raw(token, "post", raw) }

func (m *mcpHTTP) raw(token, op string, args []byte) (Reply, error) {
	m.mu.Lock()
	m.id++
	id := m.id
	m.mu.Unlock()
	req, err := http.NewRequest("POST", m.base+"/mcp", bytes.NewReader(callRequest(id, op, args)))
	if err != nil {
		return Reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return Reply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return Reply{}, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw = lastSSEData(raw)
	}
	r, err := toolReply("MCP tools/call "+op, resp.StatusCode, raw)
	r.Header = resp.Header
	return r, err
}

// toolArguments is a tool call's arguments as JSON: an object, empty for
// none.
func toolArguments(args map[string]any) ([]byte, error) {
	if args == nil {
		args = map[string]any{}
	}
	return json.Marshal(args)
}

// lastSSEData is the last data line of an SSE answer: the JSON-RPC
// response after any progress notifications.
func lastSSEData(raw []byte) []byte {
	var last []byte
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if d, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte("data:")); ok {
			last = bytes.TrimSpace(d)
		}
	}
	return last
}

// mcpStdio speaks MCP over stdio: one process of the given command per
// token, the token in PARLEY_TOKEN (docs/protocol.md §2.1).
type mcpStdio struct {
	command string
	mu      sync.Mutex
	procs   map[string]*stdioProc
	id      int
}

type stdioProc struct {
	mu  sync.Mutex // one request at a time on this process's pipes
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func (m *mcpStdio) Name() string { return "mcp-stdio" }

func (m *mcpStdio) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.procs {
		p.in.Close()
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
	m.procs = nil
}

func (m *mcpStdio) proc(token string) (*stdioProc, error) {
	if p, ok := m.procs[token]; ok {
		return p, nil
	}
	p, err := m.start(token)
	if err != nil {
		return nil, err
	}
	if m.procs == nil {
		m.procs = map[string]*stdioProc{}
	}
	m.procs[token] = p
	return p, nil
}

// drop ends the process of token: a check done with an identity of its
// own frees what its process holds (a server's database connections).
func (m *mcpStdio) drop(token string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.procs[token]; ok {
		p.in.Close()
		p.cmd.Process.Kill()
		p.cmd.Wait()
		delete(m.procs, token)
	}
}

// start runs the command for token and initializes MCP on it; the caller
// holds m.mu.
func (m *mcpStdio) start(token string) (*stdioProc, error) {
	cmd := exec.Command("sh", "-c", m.command)
	cmd.Env = append(os.Environ(), "PARLEY_TOKEN="+token)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &stdioProc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	m.id++
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"parley-conform","version":"1"}}}`, m.id)
	if _, err := p.roundTrip([]byte(init), m.id); err != nil {
		return nil, fmt.Errorf("initialize over stdio: %w", err)
	}
	fmt.Fprintln(p.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p, nil
}

// roundTrip writes one request line and reads lines until the answer
// with that id.
func (p *stdioProc) roundTrip(req []byte, id int) ([]byte, error) {
	return p.roundTripSeeing(req, id, nil)
}

// roundTripSeeing is roundTrip handing every other line read before the
// answer (notifications) to seen, if not nil.
func (p *stdioProc) roundTripSeeing(req []byte, id int, seen func([]byte)) ([]byte, error) {
	if _, err := p.in.Write(append(req, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := p.out.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		var head struct {
			ID *int `json:"id"`
		}
		if json.Unmarshal(line, &head) == nil && head.ID != nil && *head.ID == id {
			return line, nil
		}
		if seen != nil {
			seen(line)
		}
	}
}

func (m *mcpStdio) Call(token, op string, args map[string]any) (Reply, error) {
	b, err := toolArguments(args)
	if err != nil {
		return Reply{}, err
	}
	return m.raw(token, op, b)
}

func (m *mcpStdio) PostRaw(token string, raw []byte) (Reply, error) { return m.raw(token, "post", raw) }

func (m *mcpStdio) raw(token, op string, args []byte) (Reply, error) {
	if token == "" {
		return Reply{}, errSkip("stdio acts as one token; no call without one")
	}
	m.mu.Lock()
	p, err := m.proc(token)
	m.id++
	id := m.id
	m.mu.Unlock()
	if err != nil {
		return Reply{}, err
	}
	// Calls of different tokens run side by side (a waiting inbox and the
	// post that ends its wait); one process answers one call at a time.
	p.mu.Lock()
	defer p.mu.Unlock()
	line, err := p.roundTrip(callRequest(id, op, args), id)
	if err != nil {
		return Reply{}, err
	}
	return toolReply("MCP stdio tools/call "+op, 200, line)
}

// send does a prepared request and decodes its JSON answer.
func (h *httpBinding) send(req *http.Request) (Reply, error) {
	resp, err := httpClient.Do(req)
	if err != nil {
		return Reply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return Reply{}, err
	}
	r := Reply{Status: resp.StatusCode, Raw: raw, Header: resp.Header, Wire: "HTTP " + req.Method + " " + req.URL.Path}
	if strings.Contains(resp.Header.Get("Content-Type"), "json") {
		json.Unmarshal(raw, &r.Body)
	}
	return r, nil
}

// refusedAtStart runs the command with token and reports how it ended: a
// bad token stops it before it serves, the refusal on stderr
// (docs/protocol.md §2.1).
func (m *mcpStdio) refusedAtStart(token string) (exited bool, stderr string, err error) {
	cmd := exec.Command("sh", "-c", m.command)
	cmd.Env = append(os.Environ(), "PARLEY_TOKEN="+token)
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	cmd.Stdin = strings.NewReader("")
	runErr := cmd.Run()
	if _, ok := runErr.(*exec.ExitError); ok {
		return true, errBuf.String(), nil
	}
	return false, errBuf.String(), runErr
}

// callOn runs a tool call on one given process of the command; with a
// progressToken it asks for progress, and hands each line read before the
// answer to seen.
func (m *mcpStdio) callOn(p *stdioProc, op string, args map[string]any, progressToken string, seen func([]byte)) (Reply, error) {
	b, err := toolArguments(args)
	if err != nil {
		return Reply{}, err
	}
	m.mu.Lock()
	m.id++
	id := m.id
	m.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	line, err := p.roundTripSeeing(callRequestProgress(id, op, b, progressToken), id, seen)
	if err != nil {
		return Reply{}, err
	}
	return toolReply("MCP stdio tools/call "+op, 200, line)
}
