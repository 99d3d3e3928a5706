package testkit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// StdioMCP is a `parley mcp` process driven over its stdin and stdout as a
// desktop client does: JSON-RPC, one message a line.
type StdioMCP struct {
	t       testing.TB
	in      io.Writer
	mu      sync.Mutex
	next    int
	waiting map[int]chan rpcAnswer
	stderr  *SyncBuffer
}

type rpcAnswer struct {
	raw map[string]any
	at  time.Time
}

// StartStdioMCP starts `binary mcp` on db acting as token, and initializes
// it as a client does; it is killed when the test ends.
func StartStdioMCP(t testing.TB, binary, db, token string) *StdioMCP {
	t.Helper()
	cmd := exec.Command(binary, "mcp", "--db", db)
	cmd.Env = append(CleanEnv(), "PARLEY_TOKEN="+token)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	m := &StdioMCP{t: t, in: in, waiting: map[int]chan rpcAnswer{}, stderr: &SyncBuffer{}}
	cmd.Stderr = m.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<22)
		for sc.Scan() {
			var v map[string]any
			if json.Unmarshal(sc.Bytes(), &v) != nil {
				continue
			}
			id, _ := v["id"].(float64)
			m.mu.Lock()
			ch := m.waiting[int(id)]
			delete(m.waiting, int(id))
			m.mu.Unlock()
			if ch != nil {
				ch <- rpcAnswer{v, time.Now()}
			}
		}
		m.mu.Lock()
		for _, ch := range m.waiting {
			close(ch)
		}
		m.waiting = nil
		m.mu.Unlock()
	}()
	r, _ := m.send("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "t", "version": "1"}})()
	if r["result"] == nil {
		t.Fatalf("initialize answered %v\n%s", r, m.stderr.String())
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return m
}

// send writes one request; the function returned waits for its answer.
func (m *StdioMCP) send(method string, params any) func() (map[string]any, time.Time) {
	m.mu.Lock()
	m.next++
	id := m.next
	ch := make(chan rpcAnswer, 1)
	if m.waiting != nil {
		m.waiting[id] = ch
	} else {
		close(ch)
	}
	m.mu.Unlock()
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	m.in.Write(append(line, '\n'))
	return func() (map[string]any, time.Time) {
		select {
		case r, ok := <-ch:
			if !ok {
				m.t.Fatalf("parley mcp exited:\n%s", m.stderr.String())
			}
			return r.raw, r.at
		case <-time.After(2 * time.Minute):
			m.t.Fatalf("parley mcp did not answer %s", method)
		}
		return nil, time.Time{}
	}
}

// Async calls a tool; the function returned gives its structured result
// and when it came, and fails the test on a refusal.
func (m *StdioMCP) Async(name string, args map[string]any) func() (map[string]any, time.Time) {
	if args == nil {
		args = map[string]any{}
	}
	answer := m.send("tools/call", map[string]any{"name": name, "arguments": args})
	return func() (map[string]any, time.Time) {
		m.t.Helper()
		r, at := answer()
		res, _ := Dig(r, "result", "structuredContent").(map[string]any)
		if res == nil || Dig(r, "result", "isError") == true {
			m.t.Fatalf("tool %s answered %v", name, r)
		}
		return res, at
	}
}

// Tool calls a tool and returns its structured result.
func (m *StdioMCP) Tool(name string, args map[string]any) map[string]any {
	m.t.Helper()
	v, _ := m.Async(name, args)()
	return v
}
