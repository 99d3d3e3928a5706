package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// progressGrace is what the kit allows beyond the 10 s of §13 between two
// progress notifications: scheduling and the network, not a looser rule.
const progressGrace = 3 * time.Second

// callProgress runs a tool call over Streamable HTTP with a progressToken,
// reading the answer as it comes: an SSE stream whose notifications go to
// seen, the JSON-RPC response last (or a plain JSON answer).
func (m *mcpHTTP) callProgress(token, op string, args map[string]any, progressToken string, seen func(map[string]any)) (Reply, error) {
	b, err := toolArguments(args)
	if err != nil {
		return Reply{}, err
	}
	m.mu.Lock()
	m.id++
	id := m.id
	m.mu.Unlock()
	req, err := http.NewRequest("POST", m.base+"/mcp", bytes.NewReader(callRequestProgress(id, op, b, progressToken)))
	if err != nil {
		return Reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := httpClient.Do(req)
	if err != nil {
		return Reply{}, err
	}
	defer resp.Body.Close()
	wire := "MCP tools/call " + op
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		return toolReply(wire, resp.StatusCode, buf.Bytes())
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	var data []byte
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimSpace(d)...)
			continue
		}
		if line != "" || len(data) == 0 {
			continue
		}
		var msg map[string]any
		if err := json.Unmarshal(data, &msg); err != nil {
			return Reply{}, fmt.Errorf("%s: an SSE message is not JSON: %.200s", wire, data)
		}
		if _, isResponse := msg["id"]; isResponse && msg["method"] == nil {
			return toolReply(wire, resp.StatusCode, data)
		}
		seen(msg)
		data = nil
	}
	if len(data) > 0 {
		return toolReply(wire, resp.StatusCode, data)
	}
	return Reply{}, fmt.Errorf("%s: the SSE stream ended without the response: %v", wire, sc.Err())
}

// callProgress runs a tool call over the MCP binding in use with a
// progressToken; the notifications read before the answer go to seen.
func (k *kit) callProgress(role, op string, args map[string]any, progressToken string, seen func(map[string]any)) (Reply, error) {
	switch b := k.b.(type) {
	case *mcpHTTP:
		return b.callProgress(k.tok(role), op, args, progressToken, seen)
	case *mcpStdio:
		b.mu.Lock()
		p, err := b.proc(k.tok(role))
		b.mu.Unlock()
		if err != nil {
			return Reply{}, err
		}
		return b.callOn(p, op, args, progressToken, func(line []byte) {
			var msg map[string]any
			if json.Unmarshal(line, &msg) == nil {
				seen(msg)
			}
		})
	}
	return Reply{}, errSkip("progress notifications are MCP's")
}

type note struct {
	at  time.Time
	msg map[string]any
}

// hasThread reports whether an inbox answer lists a turn in thread.
func hasThread(r Reply, thread string) bool {
	for _, it := range list(r.Body, "items") {
		if str(it, "thread", "id") == thread {
			return true
		}
	}
	return false
}

func progressChecks() []check {
	s := "feed"
	return []check{
		{s, "a waiting MCP inbox with a progressToken sends notifications/progress at least every 10 s, then its answer", "§13 (errata 2)", true, false, func(k *kit) error {
			if k.b.Name() == "http" {
				return errSkip("progress notifications are MCP's")
			}
			w := k.limit("wait_max_seconds")
			if w <= 12 {
				return errSkip("wait_max_seconds %d: no wait long enough to need progress twice", w)
			}
			_, cursor := k.inboxAll("carol", "", false, nil)
			token := fmt.Sprintf("conform-%s-%d", k.run, k.seq.Add(1))
			notes := make(chan note, 64)
			done := make(chan Reply, 1)
			start := time.Now()
			go func() {
				r, err := k.callProgress("carol", "inbox", map[string]any{"since": cursor, "wait": w}, token, func(m map[string]any) {
					notes <- note{time.Now(), m}
				})
				if err != nil {
					r = Reply{Status: 599, Raw: []byte(err.Error())}
				}
				done <- r
			}()
			last, lastProgress := start, -1.0
			for i := 0; i < 2; i++ {
				select {
				case n := <-notes:
					if str(n.msg, "method") != "notifications/progress" {
						i--
						continue // another notification; not counted
					}
					gap := n.at.Sub(last)
					p, ok := dig(n.msg, "params", "progress").(float64)
					if err := all(
						expect(str(n.msg, "params", "progressToken") == token, "progressToken %v, want %q: %s", dig(n.msg, "params", "progressToken"), token, show(n.msg)),
						expect(ok && p > lastProgress, "progress %v after %v: it must be a number that grows: %s", dig(n.msg, "params", "progress"), lastProgress, show(n.msg)),
						expect(gap <= 10*time.Second+progressGrace, "notification %d came %s after the previous (or the call), more than 10 s", i+1, gap.Round(100*time.Millisecond))); err != nil {
						return err
					}
					last, lastProgress = n.at, p
				case r := <-done:
					return fmt.Errorf("the call answered after %s with %d progress notifications, fewer than 2: %s", time.Since(start).Round(100*time.Millisecond), i, r)
				case <-time.After(10*time.Second + progressGrace):
					return fmt.Errorf("no progress notification %d within 10 s of %s", i+1, map[bool]string{true: "the call", false: "the previous"}[i == 0])
				}
			}
			th, _ := k.ask("alice", "to", map[string]any{"identity": k.who("carol")})
			r := <-done
			return all(accepted(r), expect(hasThread(r, th), "after its progress the waiting inbox answered without %s: %s", th, r))
		}},
		{s, "a turn posted through one process wakes a waiting inbox of another: stdio beside HTTP, both ways", "§13 (errata 2)", false, false, func(k *kit) error {
			if k.b.Name() != "mcp-stdio" {
				return errSkip("needs --mcp-stdio: the stdio command's process beside the server's")
			}
			h := &httpBinding{base: k.base}
			return all(k.wakes(h, k.b), k.wakes(k.b, h))
		}},
	}
}

// wakes holds a waiting inbox of carol over waitOn, posts a turn for her
// over postOn, and wants the waiting call to answer with it before half
// its wait elapsed (a server that only looked again when the wait ended
// would answer then).
func (k *kit) wakes(waitOn, postOn Binding) error {
	w := k.limit("wait_max_seconds")
	_, cursor := k.inboxAll("carol", "", false, nil)
	done := make(chan Reply, 1)
	start := time.Now()
	go func() {
		r, err := waitOn.Call(k.tok("carol"), "inbox", map[string]any{"since": cursor, "wait": w})
		if err != nil {
			r = Reply{Status: 599, Raw: []byte(err.Error())}
		}
		done <- r
	}()
	time.Sleep(200 * time.Millisecond)
	p, err := postOn.Call(k.tok("alice"), "post", map[string]any{"kind": "ask", "body": k.body("a question across processes"), "to": map[string]any{"identity": k.who("carol")}})
	if err != nil {
		return err
	}
	if !p.OK() {
		return fmt.Errorf("post over %s: %s", postOn.Name(), p)
	}
	th := str(p.Body, "thread", "id")
	r := <-done
	took := time.Since(start)
	return all(accepted(r),
		expect(hasThread(r, th), "a turn posted over %s: the inbox waiting over %s answered without %s: %s", postOn.Name(), waitOn.Name(), th, r),
		expect(took < time.Duration(w)*time.Second/2, "a turn posted over %s: the inbox waiting over %s answered after %s of its %d s wait, not when the turn opened", postOn.Name(), waitOn.Name(), took.Round(100*time.Millisecond), w))
}
