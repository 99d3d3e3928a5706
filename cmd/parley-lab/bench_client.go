package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// benchClient makes each agent's client for one server and binding.
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

// forAgent is one agent's connection: its own keep-alive HTTP client, or
// its own MCP client session.
func (c benchClient) forAgent(token string) *agentClient {
	hc := &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 2, DisableCompression: true},
	}
	return newAgentClient(c.base, token, hc, c.mcp, "parley-bench")
}

// worker is one agent running one operation.
type worker struct {
	st     *stage
	agent  benchAgent
	client *agentClient
	n      int
	run    int // the stage's run, so that the same agent's bodies differ from run to run (the bare handler's too)
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
		r, err := w.once(ctx, op)
		took := time.Since(start)
		status, out, header := r.status, r.body, r.header
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

func (w *worker) once(ctx context.Context, op string) (reply, error) {
	w.seq++
	note := func(thread string) map[string]any {
		return map[string]any{"kind": "note", "thread": thread, "body": fmt.Sprintf("agent %d, note %d.%d.%d: a measured remark", w.n, w.st.round, w.run, w.seq),
			"from": map[string]any{"extension": fmt.Sprintf("w%d", w.seq%4)}}
	}
	switch op {
	case "posts":
		return w.client.call(ctx, "post", note(w.st.threads[w.rng.IntN(len(w.st.threads))]))
	case "hot":
		return w.client.call(ctx, "post", note(w.st.hot.get()))
	case "read", "read304":
		var h http.Header
		if op == "read304" && w.etag != "" {
			h = http.Header{"If-None-Match": {w.etag}}
		}
		return w.client.call(ctx, "read_thread", map[string]any{"thread": w.st.big}, withHeader(h), discardBody())
	case "inbox":
		return w.client.call(ctx, "inbox", withCursor("since", w.cursor))
	case "list":
		return w.client.call(ctx, "list_threads", withCursor("cursor", w.cursor))
	}
	return reply{}, errors.New("unknown operation " + op)
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
	r, err := w.client.call(ctx, "post", map[string]any{"kind": "ask", "body": fmt.Sprintf("The next hot thread (agent %d).", w.n)})
	if id, _ := dig(r.body, "thread", "id").(string); err == nil && id != "" {
		w.st.hot.replace(full, id)
	}
}
