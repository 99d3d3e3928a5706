package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"parley/services"
)

// Every JSON-RPC message is screened before the MCP library decodes it, on
// both transports, so that what the library would misread or answer in a
// way an agent cannot act on gets a JSON-RPC answer of Parley's own:
//
//   - encoding/json keeps the last of two equal member names and turns
//     invalid UTF-8 into U+FFFD: services.CheckJSON refuses both, so
//     {"kind":"note","kind":"ask"} is refused over MCP as over HTTP;
//   - a batch is an Invalid Request (-32600): MCP sends one message at a
//     time, and the library would call it unparsable;
//   - "id": null is an Invalid Request, not a notification;
//   - a message over request_max_bytes is refused like an HTTP request of
//     that size: a tool call gets a tool refusal (invalid_body, status 413,
//     field naming its largest argument) that the agent can act on; any
//     other request a JSON-RPC error carrying the refusal object.
//
// A tools/call gets a refusal as a tool result (isError, reason
// invalid_body, field named as in the arguments); anything else a JSON-RPC
// error.

// verdict is the answer to a message that does not pass: a JSON-RPC
// response, and the HTTP status it goes with (stdio ignores it).
type verdict struct {
	body   []byte
	status int
}

// screen returns nil when msg may go on to the MCP library, and what it
// read of msg (peek), so that the gate need not decode it again.
func screen(msg []byte, limit int) (*verdict, message) {
	trimmed := bytes.TrimSpace(msg)
	var r *services.Refusal
	valid, err := services.CheckJSONValue(msg)
	switch {
	case len(trimmed) == 0:
		return rpcError(nil, mcpgo.PARSE_ERROR, http.StatusBadRequest, "the request is empty: send one JSON-RPC message", nil), message{}
	case errors.As(err, &r):
		id, method, _ := head(msg)
		if method == string(mcpgo.MethodToolsCall) && id != nil {
			r.Field = strings.TrimPrefix(r.Field, "params.arguments.")
			return toolRefusal(id, r), message{}
		}
		return rpcError(nil, mcpgo.PARSE_ERROR, http.StatusBadRequest, r.Message, nil), message{}
	case !valid:
		return rpcError(nil, mcpgo.PARSE_ERROR, http.StatusBadRequest, "the request is not valid JSON", nil), message{}
	case trimmed[0] == '[':
		return rpcError(nil, mcpgo.INVALID_REQUEST, http.StatusBadRequest, "batches are not supported: send one JSON-RPC message per request", nil), message{}
	case trimmed[0] != '{':
		return rpcError(nil, mcpgo.INVALID_REQUEST, http.StatusBadRequest, "a JSON-RPC message is a JSON object", nil), message{}
	}
	m := peek(trimmed)
	if string(m.jsonrpc) != `"2.0"` {
		return rpcError(validID(m.id), mcpgo.INVALID_REQUEST, http.StatusBadRequest, `jsonrpc must be "2.0"`, nil), m
	}
	if len(m.id) > 0 && validID(m.id) == nil {
		return rpcError(nil, mcpgo.INVALID_REQUEST, http.StatusBadRequest,
			"id must be a string or a number; leave it out only for a notification, which gets no answer", nil), m
	}
	if len(msg) > limit {
		return oversized(msg, m.id, limit), m
	}
	return nil, m
}

// message is what the gate reads of a JSON-RPC message, in one decode
// (peek): its version, its id as sent (empty when absent, "null" for
// null), its method and, for tools/call, the tool's name and arguments as
// sent. plain says the message is nothing else: the members jsonrpc, id,
// method and params, each spelled so and sent once, and in params name (a
// string) and at most arguments (an object), nothing more — no _meta, no
// task — so that the gate may serve a call itself (direct.go).
type message struct {
	jsonrpc, id  json.RawMessage
	method, tool string
	args         json.RawMessage
	plain        bool
}

// peek reads msg's message in one pass of the tokenizer, leniently: what
// it cannot read it leaves empty. jsonrpc and id are matched exactly, as
// the screen requires; method, params and name as encoding/json matches
// them into the MCP library's types (ignoring case, the last one winning),
// so that the gate admits the call the library will make.
func peek(msg []byte) message {
	var m message
	var seen, inParams uint8 // the members met, a bit each (plainMembers)
	odd := false             // a member that a plain message does not have
	members(msg, func(key string, val jsontext.Value) {
		odd = odd || seen&plainMembers[key] != 0 || plainMembers[key] == 0
		seen |= plainMembers[key]
		switch {
		case key == "jsonrpc":
			m.jsonrpc = bytes.Clone(val)
		case key == "id":
			m.id = bytes.Clone(val)
		case strings.EqualFold(key, "method"):
			m.method = stringValue(val)
		case strings.EqualFold(key, "params"):
			m.tool, m.args, inParams = "", nil, 0
			odd = odd || val.Kind() != '{'
			members(val, func(key string, val jsontext.Value) {
				bit := plainParams[key]
				odd = odd || inParams&bit != 0 || bit == 0 || bit == 1 && val.Kind() != '"' || bit == 2 && val.Kind() != '{'
				inParams |= bit
				if strings.EqualFold(key, "name") {
					m.tool = stringValue(val)
				}
				if key == "arguments" {
					m.args = bytes.Clone(val)
				}
			})
		}
	})
	m.plain = !odd && seen == 0b1111 && inParams&1 != 0
	return m
}

// plainMembers and plainParams are the members of a plain message (see
// message) and of its params, a bit each.
var (
	plainMembers = map[string]uint8{"jsonrpc": 1, "id": 2, "method": 4, "params": 8}
	plainParams  = map[string]uint8{"name": 1, "arguments": 2}
)

// members calls fn with each member of the JSON object v in turn, up to
// the first thing it cannot read; nothing when v is not an object. val is
// valid only during the call.
func members(v []byte, fn func(key string, val jsontext.Value)) {
	dec := jsontext.NewDecoder(bytes.NewReader(v), peekOptions...)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil || name.Kind() != '"' {
			return
		}
		key := name.String() // before the token is reused
		val, err := dec.ReadValue()
		if err != nil {
			return
		}
		fn(key, val)
	}
}

// stringValue is v's text when v is a JSON string, else "".
func stringValue(v jsontext.Value) string {
	if v.Kind() != '"' {
		return ""
	}
	s, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		return ""
	}
	return string(s)
}

// operation is the operation a tools/call message calls.
func (m message) operation() (services.Operation, bool) {
	if m.method != string(mcpgo.MethodToolsCall) {
		return services.Operation{}, false
	}
	return services.MCPOperation(m.tool)
}

// oversized answers a message larger than request_max_bytes.
func oversized(msg []byte, id json.RawMessage, limit int) *verdict {
	r := services.Refuse(services.InvalidBody, "this message is %d bytes; at most %d (request_max_bytes)", len(msg), limit)
	r.Status = http.StatusRequestEntityTooLarge
	_, method, args := head(msg)
	if method == string(mcpgo.MethodToolsCall) && id != nil {
		if name, size := largest(args); name != "" {
			r.Message += fmt.Sprintf("; its largest argument is %s, at %d bytes: shorten it (body_max_chars and the other limits are in the manifest)", name, size)
			r.Field = name
		}
		return toolRefusal(id, r)
	}
	return rpcError(id, mcpgo.INVALID_REQUEST, http.StatusRequestEntityTooLarge, r.Message, r)
}

// head reads what addresses an answer, leniently: the id (nil when absent
// or not a string or number), the method and a tool call's arguments.
func head(msg []byte) (id json.RawMessage, method string, args map[string]json.RawMessage) {
	var h struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Arguments map[string]json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	json.Unmarshal(msg, &h) // lenient on purpose: only to address the answer
	return validID(h.ID), h.Method, h.Params.Arguments
}

// validID returns id when it is a string or a number, else nil.
func validID(id json.RawMessage) json.RawMessage {
	var s string
	var n json.Number
	switch id := bytes.TrimSpace(id); {
	case len(id) == 0 || string(id) == "null": // null decodes into anything
		return nil
	case json.Unmarshal(id, &s) == nil || json.Unmarshal(id, &n) == nil:
		return id
	}
	return nil
}

func largest(args map[string]json.RawMessage) (string, int) {
	name, size := "", 0
	for k, v := range args {
		if len(v) > size || (len(v) == size && k < name) {
			name, size = k, len(v)
		}
	}
	return name, size
}

// toolRefusal answers a tool call with the refusal as its result.
func toolRefusal(id json.RawMessage, r *services.Refusal) *verdict {
	res, _ := result(context.Background(), nil, "", nil, r) // a refusal: no fault to log
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": res})
	return &verdict{out, http.StatusOK}
}

// rpcError is a JSON-RPC error; a refusal, when there is one, rides along
// as its data, the same object the HTTP binding sends.
func rpcError(id json.RawMessage, code, status int, message string, r *services.Refusal) *verdict {
	if id == nil {
		id = json.RawMessage("null")
	}
	e := map[string]any{"code": code, "message": message}
	if r != nil {
		e["data"] = services.RefusalBody{Error: r}
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	return &verdict{out, status}
}

// peekOptions spare peek the checks the screen makes once, before it
// (services.CheckJSONValue): names twice, invalid UTF-8.
var peekOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}
