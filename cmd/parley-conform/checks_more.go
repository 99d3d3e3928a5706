package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// idempotencyChecks: safe retries of post (§3, errata 2).
func idempotencyChecks() []check {
	s := "envelope"
	return []check{
		{s, "a retried post with the same idempotency_key stores nothing new and answers replayed", "§3 errata 2", false, false, func(k *kit) error {
			key := "conform-" + k.run + "-" + fmt.Sprint(k.seq.Add(1))
			env := map[string]any{"kind": "ask", "body": k.body("q"), "idempotency_key": key}
			a, b := k.post("alice", env), k.post("alice", env)
			if err := all(accepted(a), accepted(b)); err != nil {
				return err
			}
			return all(
				expect(str(a.Body, "message", "id") == str(b.Body, "message", "id"), "the retry stored %s besides %s", str(b.Body, "message", "id"), str(a.Body, "message", "id")),
				expect(b.Body["replayed"] == true, "the retry's answer lacks replayed true: %s", b))
		}},
		{s, "the same idempotency_key with another envelope is idempotency_key_reused", "§3 errata 2", false, false, func(k *kit) error {
			key := "conform-" + k.run + "-" + fmt.Sprint(k.seq.Add(1))
			k.must("alice", map[string]any{"kind": "ask", "body": k.body("q"), "idempotency_key": key})
			return refused(k.post("alice", map[string]any{"kind": "ask", "body": k.body("other"), "idempotency_key": key}), "idempotency_key_reused", "idempotency_key")
		}},
		{s, "an idempotency_key of another form is invalid_body", "§3 errata 2", false, false, func(k *kit) error {
			return refused(k.post("alice", map[string]any{"kind": "ask", "body": k.body("q"), "idempotency_key": "has spaces and é"}), "invalid_body", "idempotency_key")
		}},
		{s, "over HTTP a replay answers 200 with Idempotent-Replayed: true", "§3 errata 2", false, true, func(k *kit) error {
			key := "conform-" + k.run + "-" + fmt.Sprint(k.seq.Add(1))
			env := map[string]any{"kind": "ask", "body": k.body("q"), "idempotency_key": key}
			a, b := k.post("alice", env), k.post("alice", env)
			return all(expect(a.Status == 201, "first post %d", a.Status),
				expect(b.Status == 200 && b.Header.Get("Idempotent-Replayed") == "true", "replay: status %d, Idempotent-Replayed %q", b.Status, b.Header.Get("Idempotent-Replayed")))
		}},
	}
}

// rpc sends one JSON-RPC request over the MCP binding in use and returns
// the decoded response.
func (k *kit) rpc(role, method string, params any) map[string]any {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	switch b := k.b.(type) {
	case *mcpHTTP:
		req, _ := http.NewRequest("POST", b.base+"/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if role != "" {
			req.Header.Set("Authorization", "Bearer "+k.tok(role))
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			raw = lastSSEData(raw)
		}
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			panic(fmt.Errorf("%s: not JSON-RPC: %.200s", method, raw))
		}
		return out
	case *mcpStdio:
		b.mu.Lock()
		p, err := b.proc(k.tok(role))
		b.id++
		id := b.id
		b.mu.Unlock()
		if err != nil {
			panic(err)
		}
		body, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		p.mu.Lock()
		defer p.mu.Unlock()
		line, err := p.roundTrip(body, id)
		if err != nil {
			panic(err)
		}
		var out map[string]any
		json.Unmarshal(line, &out)
		return out
	}
	panic(skipError("MCP only"))
}

// bindingChecks: what MCP's binding adds (§2, §2.1).
func bindingChecks() []check {
	s := "bindings"
	return []check{
		{s, "every tool declares an input schema; post's is the envelope's", "§2.1", false, false, func(k *kit) error {
			tools := list(k.rpc("alice", "tools/list", map[string]any{}), "result", "tools")
			names := map[string]map[string]any{}
			for _, t := range tools {
				names[str(t, "name")] = obj(t)
				if obj(t, "inputSchema") == nil {
					return fmt.Errorf("tool %s has no inputSchema", str(t, "name"))
				}
			}
			for _, op := range []string{"get_manifest", "whoami", "post", "read_thread", "list_threads", "inbox", "get_events"} {
				if names[op] == nil {
					return fmt.Errorf("tools/list lacks %s", op)
				}
			}
			props := obj(names["post"], "inputSchema", "properties")
			for _, f := range []string{"kind", "body", "thread", "parent", "from"} {
				if props[f] == nil {
					return fmt.Errorf("post's schema has no property %s: %s", f, show(props))
				}
			}
			return nil
		}},
		{s, "a refusal is a tool result, not a JSON-RPC error", "§2", false, false, func(k *kit) error {
			out := k.rpc("alice", "tools/call", map[string]any{"name": "post", "arguments": map[string]any{"kind": "shout", "body": "x"}})
			return all(expect(out["error"] == nil, "a refusal came as a JSON-RPC error: %s", show(out)),
				expect(dig(out, "result", "isError") == true && str(out, "result", "structuredContent", "error", "reason") == "invalid_body", "result %s", show(out["result"])))
		}},
		{s, "an unknown method is a JSON-RPC error", "§2", false, false, func(k *kit) error {
			out := k.rpc("alice", "no/such/method", map[string]any{})
			return expect(out["error"] != nil && out["result"] == nil, "answer %s", show(out))
		}},
		{s, "structuredContent is the HTTP body, and the text content the same JSON", "§2.1", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			out := k.rpc("alice", "tools/call", map[string]any{"name": "read_thread", "arguments": map[string]any{"thread": th}})
			text := str(out, "result", "content", 0, "text")
			var fromText map[string]any
			if err := json.Unmarshal([]byte(text), &fromText); err != nil {
				return fmt.Errorf("text content is not JSON: %.200s", text)
			}
			a, _ := json.Marshal(fromText)
			b, _ := json.Marshal(obj(out, "result", "structuredContent"))
			h := &httpBinding{base: k.base}
			hr, err := h.Call(k.tok("alice"), "read_thread", map[string]any{"thread": th})
			if err != nil {
				return err
			}
			c, _ := json.Marshal(hr.Body)
			return all(expect(bytes.Equal(a, b), "text and structuredContent differ"), expect(bytes.Equal(b, c), "structuredContent differs from the HTTP body:\n%s\n%s", b, c))
		}},
		{s, "the Streamable HTTP endpoint answers GET and DELETE 405 with Allow: POST, a foreign Origin 403, a body not JSON 415", "§2.1 (MCP transport)", false, false, func(k *kit) error {
			m, ok := k.b.(*mcpHTTP)
			if !ok {
				return errSkip("MCP over HTTP only")
			}
			send := func(method, contentType, origin string) (*http.Response, error) {
				req, _ := http.NewRequest(method, m.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
				req.Header.Set("Content-Type", contentType)
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Authorization", "Bearer "+k.tok("alice"))
				if origin != "" {
					req.Header.Set("Origin", origin)
				}
				resp, err := httpClient.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				return resp, err
			}
			var errs []error
			for _, c := range []struct {
				method, contentType, origin string
				status                      int
			}{
				{"GET", "application/json", "", 405},
				{"DELETE", "application/json", "", 405},
				{"POST", "application/json", "https://elsewhere.example", 403},
				{"POST", "text/plain", "", 415},
			} {
				resp, err := send(c.method, c.contentType, c.origin)
				if err != nil {
					return err
				}
				errs = append(errs, expect(resp.StatusCode == c.status, "%s %s origin %q: status %d, want %d", c.method, c.contentType, c.origin, resp.StatusCode, c.status))
				if c.status == 405 {
					errs = append(errs, expect(strings.Contains(resp.Header.Get("Allow"), "POST"), "%s: Allow %q, want POST", c.method, resp.Header.Get("Allow")))
				}
			}
			return all(errs...)
		}},
		{s, "a refusal is the same object on both bindings", "§2.2", false, false, func(k *kit) error {
			th, root := k.ask("bob")
			env := map[string]any{"kind": "note", "thread": th, "parent": root, "body": k.body("n")}
			m := k.post("bob", env)
			h, err := (&httpBinding{base: k.base}).Call(k.tok("bob"), "post", env)
			if err != nil {
				return err
			}
			return expect(m.Reason() == h.Reason() && m.Field() == h.Field() && num(m.Body, "error", "status") == num(h.Body, "error", "status") && h.Status == int(num(h.Body, "error", "status")),
				"MCP %s / HTTP %s", show(m.Body), show(h.Body))
		}},
	}
}

// moreReadingChecks: the inbox's extension rules, list_threads' filter,
// claim events.
func moreReadingChecks() []check {
	s := "reading"
	return []check{
		{s, "with extension, the caller's own questions from it are hidden, not another extension's", "§8", false, false, func(k *kit) error {
			th, _ := k.ask("alice", "from", map[string]any{"extension": "a"})
			own, _ := k.inboxAll("alice", "", false, map[string]any{"extension": "a"})
			other, _ := k.inboxAll("alice", "", false, map[string]any{"extension": "b"})
			return all(expect(!slices.Contains(own, th), "extension a is handed its own question %s", th),
				expect(slices.Contains(other, th), "extension b does not see %s, asked by extension a", th))
		}},
		{s, "list_threads filters by state", "§8, §2.1", false, false, func(k *kit) error {
			th := k.at("decided")
			r := k.call("alice", "list_threads", map[string]any{"state": "decided", "limit": k.limit("page_max")})
			var ids []string
			for _, t := range list(r.Body, "threads") {
				ids = append(ids, str(t, "id"))
				if str(t, "state") != "decided" {
					return fmt.Errorf("state=decided listed %s in %s", str(t, "id"), str(t, "state"))
				}
			}
			return all(accepted(r), expect(slices.Contains(ids, th), "state=decided lacks %s", th))
		}},
	}
}

// moreGuardChecks: rule 3, runaway threads (§14).
func moreGuardChecks() []check {
	return []check{
		{"guard", "a thread of guard_thread_run_max model messages pauses: loop_suspected, until a human acts", "§14 rule 3", false, false, func(k *kit) error {
			n := k.limit("guard_thread_run_max")
			if n <= 0 || n > 300 {
				return errSkip("guard_thread_run_max %d", n)
			}
			th, root := k.ask("alice")
			roles := []string{"bob", "carol"}
			for i := 1; i < n; i++ { // the root is the first model message
				k.must(roles[i%2], map[string]any{"kind": "note", "thread": th, "parent": root, "body": k.body("run")})
			}
			r := k.post("bob", map[string]any{"kind": "note", "thread": th, "parent": root, "body": k.body("one more")})
			if err := refused(r, "loop_suspected", "thread"); err != nil {
				return err
			}
			if g := str(k.thread(th), "guard"); g != "paused" {
				return fmt.Errorf("guard %q, want paused", g)
			}
			k.must("human", map[string]any{"kind": "note", "thread": th, "parent": root, "body": k.body("a human acts")})
			return accepted(k.post("bob", map[string]any{"kind": "note", "thread": th, "parent": root, "body": k.body("after the human")}))
		}},
	}
}

// moreDialecticChecks: claim status changes are events (§8, §10).
func moreDialecticChecks() []check {
	return []check{
		{"dialectic", "a claim's status change is an event of type claim", "§8, §10", false, false, func(k *kit) error {
			th, cl, _ := k.claim("alice")
			k.claimAct("bob", "attest", th, cl)
			ev := list(k.call("alice", "get_events", map[string]any{"thread": th}).Body, "events")
			for _, e := range ev {
				if str(e, "type") == "claim" && str(e, "to_state") == "supported" {
					return nil
				}
			}
			return fmt.Errorf("no claim event to supported: %s", show(ev))
		}},
	}
}
