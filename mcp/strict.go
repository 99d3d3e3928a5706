package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"parley/services"
)

// The MCP library decodes every JSON-RPC message with encoding/json, which
// keeps the last of two equal member names and turns invalid UTF-8 into
// U+FFFD. Both transports therefore check each message with
// services.CheckJSON first, so that {"kind":"note","kind":"ask"} is refused
// over MCP as it is over HTTP. A tools/call gets the refusal as a tool
// result (isError, reason invalid_body, field named as in the arguments), so
// the agent can act on it; any other message gets a JSON-RPC parse error.

// strictHTTP checks the body of each POST before the transport reads it.
func strictHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "could not read the request body", http.StatusBadRequest)
			return
		}
		if answer := strictAnswer(body); answer != nil {
			w.Header().Set("Content-Type", "application/json")
			w.Write(answer)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// strictStdio passes the lines of in that pass the check on to the
// transport, and answers the others on out itself. out is shared with the
// transport, so writes to it are serialized, one whole message each.
func strictStdio(ctx context.Context, in io.Reader, out io.Writer, log *slog.Logger) (io.Reader, io.Writer) {
	pr, pw := io.Pipe()
	locked := &lockedWriter{w: out}
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
		for sc.Scan() && ctx.Err() == nil {
			line := sc.Bytes()
			if answer := strictAnswer(line); answer != nil {
				locked.Write(append(answer, '\n'))
				continue
			}
			if _, err := pw.Write(append(bytes.Clone(line), '\n')); err != nil {
				return
			}
		}
		if err := sc.Err(); err != nil {
			log.Warn("mcp stdio: reading input", "err", err)
		}
		pw.CloseWithError(sc.Err())
	}()
	return pr, locked
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// strictAnswer is nil when msg passes the check, else the JSON-RPC answer.
func strictAnswer(msg []byte) []byte {
	err := services.CheckJSON(msg)
	var r *services.Refusal
	if !errors.As(err, &r) {
		return nil
	}
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.Unmarshal(msg, &head) // lenient on purpose: only to address the answer
	id := head.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	if head.Method == string(mcpgo.MethodToolsCall) && string(id) != "null" {
		const args = "params.arguments."
		if strings.HasPrefix(r.Field, args) {
			r.Field = strings.TrimPrefix(r.Field, args)
		}
		res, _ := result(context.Background(), slog.Default(), "", nil, r)
		out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": res})
		return out
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": mcpgo.PARSE_ERROR, "message": r.Message}})
	return out
}
