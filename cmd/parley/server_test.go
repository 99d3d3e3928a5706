package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// proc is a running `parley serve`, started the way an operator starts it.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	addr   string
	stderr *syncBuilder
	exited chan error
}

type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe starts `parley serve` on db with extra flags, through prefix
// (e.g. prlimit) when given, and waits until /healthz answers.
func startServe(t *testing.T, db string, prefix []string, flags ...string) *proc {
	t.Helper()
	addr := freeAddr(t)
	args := append(append(prefix, binary, "serve", "--db", db, "--addr", addr), flags...)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = cleanEnv()
	p := &proc{t: t, cmd: cmd, addr: addr, stderr: &syncBuilder{}, exited: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); <-p.exited })
	go func() { p.exited <- cmd.Wait() }()
	client := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp, err := client.Get(p.url("/healthz"))
		if err == nil {
			resp.Body.Close()
			return p
		}
		select {
		case err := <-p.exited:
			p.exited <- err
			t.Fatalf("server exited early (%v):\n%s", err, p.stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("server never answered /healthz: %v\n%s", err, p.stderr.String())
		}
	}
}

func (p *proc) url(path string) string { return "http://" + p.addr + path }

// tail is the end of the server's log, for a failure message.
func (p *proc) tail() string {
	log := p.stderr.String()
	return log[max(0, len(log)-4000):]
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	err := <-p.exited
	p.exited <- err
}

// alive reports whether the process still runs.
func (p *proc) alive() bool {
	select {
	case err := <-p.exited:
		p.exited <- err
		return false
	default:
		return true
	}
}

// call sends one JSON request and decodes the answer.
func call(client *http.Client, method, url, token string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return resp.StatusCode, nil, fmt.Errorf("%d %q: %w", resp.StatusCode, raw, err)
	}
	return resp.StatusCode, out, nil
}

// dig walks a decoded body: dig(v, "thread", "id").
func dig(v any, path ...string) any {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func str(v any, path ...string) string {
	s, _ := dig(v, path...).(string)
	return s
}

// agentTokens makes n agent tokens on db with the command line.
func agentTokens(t *testing.T, db string, n int) []string {
	t.Helper()
	ok(t, parley(t, nil, "", "migrate", "--db", db))
	var out []string
	for i := range n {
		r := ok(t, parley(t, nil, "", "token", "create", "--handle", fmt.Sprintf("agent%d", i), "--rights", "read,write", "--db", db))
		out = append(out, lastLine(r.stdout))
	}
	return out
}
