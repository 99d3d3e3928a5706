package mcp_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

// step is one call in the parity scenario: who calls which operation with
// which arguments (MCP's merged arguments; HTTP gets them split into path,
// query and body), and the reason expected ("" for success).
type step struct {
	who    string
	op     string
	args   map[string]any
	reason services.Reason
}

// parityScenario reaches every core operation and every refusal reason a
// client can meet outside the dialectic profile; dialecticScenario
// (dialectic_test.go) reaches the profile's operations and reasons.
func parityScenario() []step {
	steps := []step{
		{"", "get_manifest", nil, ""},
		{"alice", "whoami", nil, ""},
		{"", "whoami", nil, services.TokenMissing},
		{"forged", "whoami", nil, services.TokenInvalid},
		{"revoked", "whoami", nil, services.TokenInvalid},
		{"alice", "post", map[string]any{"kind": "ask", "body": "Which port?"}, ""},
		{"reader", "post", map[string]any{"kind": "note", "thread": "th_1", "body": "x"}, services.TokenRightMissing},
		{"bob", "post", map[string]any{"kind": "answer", "thread": 1, "parent": "msg_1", "body": "8443"}, ""},
		{"bob", "post", map[string]any{"kind": "note", "thread": "th_1", "body": "x", "mood": "calm"}, services.InvalidBody},
		{"bob", "post", map[string]any{"kind": "note", "thread": "th_1", "body": strings.Repeat("é", 501)}, services.InvalidBody},
		{"alice", "post", map[string]any{"kind": "note", "thread": "th_1", "body": "me"}, services.SelfReply},
		{"bob", "post", map[string]any{"kind": "decide", "thread": "th_1", "body": "mine"}, services.ThreadAuthorityMissing},
		{"alice", "post", map[string]any{"kind": "reopen", "thread": "th_1", "body": "x"}, services.TransitionInvalid},
		{"bob", "post", map[string]any{"kind": "note", "thread": "th_9", "body": "x"}, services.ThreadNotFound},
		{"bob", "post", map[string]any{"kind": "note", "thread": "th_1", "parent": "msg_99", "body": "x"}, services.MessageNotFound},
		{"bob", "post", map[string]any{"kind": "ask", "to": map[string]any{"identity": "ainotes:ghost"}, "body": "x"}, services.IdentityNotFound},
		{"carol", "post", map[string]any{"kind": "ask", "body": "Second thread"}, ""},
		{"bob", "post", map[string]any{"kind": "answer", "thread": "th_2", "parent": "msg_1", "body": "x"}, services.ParentMismatch},
		{"bob", "read_thread", map[string]any{"thread": "th_1"}, ""},
		{"bob", "read_thread", map[string]any{"thread": 2}, ""},
		{"bob", "read_thread", map[string]any{"thread": "th_77"}, services.ThreadNotFound},
		{"bob", "read_thread", map[string]any{"thread": "x"}, services.InvalidBody},
		{"bob", "read_thread", map[string]any{"thread": "th_1", "limit": 1}, ""},
		{"bob", "read_thread", map[string]any{"thread": "th_1", "branch": "msg_2", "depth": 2, "since": "c1.MA"}, ""},
		{"bob", "read_thread", map[string]any{"thread": "th_1", "depth": 40}, services.InvalidBody},
		{"bob", "read_thread", map[string]any{"thread": "th_1", "branch": "msg_3"}, services.MessageNotFound},
		{"bob", "list_threads", nil, ""},
		{"bob", "list_threads", map[string]any{"state": "answered", "limit": 1}, ""},
		{"bob", "list_threads", map[string]any{"state": "bogus"}, services.InvalidBody},
		{"bob", "list_threads", map[string]any{"limit": 500}, services.InvalidBody},
		{"alice", "inbox", nil, ""},
		{"bob", "inbox", map[string]any{"extension": "w1", "limit": 10}, ""},
		{"bob", "inbox", map[string]any{"since": "not-a-cursor"}, services.InvalidBody},
		{"carol", "post", map[string]any{"kind": "ask", "to": map[string]any{"identity": "ainotes:bob"}, "body": "For bob only"}, ""},
		{"bob", "inbox", map[string]any{"addressed": true}, ""},
		{"bob", "inbox", map[string]any{"addressed": false, "limit": 1}, ""},
		{"bob", "inbox", map[string]any{"addressed": true, "since": "c1.MA"}, services.InvalidBody},
		{"bob", "inbox", map[string]any{"since": "a1.MA"}, services.InvalidBody},
		{"bob", "inbox", map[string]any{"addressed": "maybe"}, services.InvalidBody},
		{"alice", "whoami", map[string]any{"extension": "w1"}, ""},
		{"alice", "whoami", map[string]any{"extension": "Not Valid"}, services.InvalidBody},
		{"bob", "list_identities", nil, ""},
		{"bob", "list_identities", map[string]any{"limit": 2}, ""},
		{"bob", "list_identities", map[string]any{"cursor": "c1.MA"}, services.InvalidBody},
		{"reader", "list_threads", map[string]any{"confirmed": true}, ""},
		{"bob", "list_threads", map[string]any{"confirmed": "maybe"}, services.InvalidBody},
		{"bob", "get_events", nil, ""},
		{"bob", "get_events", map[string]any{"thread": "th_1"}, ""},
		{"bob", "get_events", map[string]any{"thread": "th_5"}, services.ThreadNotFound},
		{"alice", "post", map[string]any{"kind": "mark", "thread": "th_1", "state": "closed", "body": "done"}, ""},
		{"mod", "list_threads", map[string]any{"confirmed": false}, ""},
		{"bob", "confirm", map[string]any{"thread": "th_1", "state": "closed"}, services.TokenRightMissing},
		{"mod", "confirm", map[string]any{"thread": "th_1", "state": "decided"}, services.StateChanged},
		{"mod", "confirm", map[string]any{"thread": "th_1"}, services.InvalidBody},
		{"mod", "confirm", map[string]any{"thread": "th_1", "state": "closed"}, ""},
		{"mod", "confirm", map[string]any{"thread": "th_1", "state": "closed"}, ""},
		{"bob", "post", map[string]any{"kind": "note", "thread": "th_1", "body": "late"}, services.ThreadLocked},
		{"mod", "post", map[string]any{"kind": "mark", "thread": "th_2", "state": "obsolete", "body": "gone"}, ""},
		{"bob", "post", map[string]any{"kind": "note", "thread": "th_2", "body": "x"}, services.ThreadEnded},
		{"mod", "post", map[string]any{"kind": "reopen", "thread": "th_2", "body": "back"}, ""},
		{"bob", "post", map[string]any{"kind": "note", "thread": "th_2", "body": "fourth"}, ""},
		{"bob", "post", map[string]any{"kind": "note", "thread": "th_2", "body": "fifth"}, services.LimitExceeded},
		{"bob", "search", map[string]any{"q": "port"}, ""},
		{"bob", "search", map[string]any{"q": "8443", "thread": "th_1", "kind": "answer", "author": "ainotes:bob", "state": "closed", "limit": 5}, ""},
		{"bob", "search", map[string]any{"q": "\"second thread\"", "limit": 1}, ""},
		{"bob", "search", nil, services.InvalidBody},
		{"bob", "search", map[string]any{"q": "port", "cursor": "c1.MA"}, services.InvalidBody},
		{"bob", "search", map[string]any{"q": "port", "thread": "th_9"}, services.ThreadNotFound},
		{"", "search", map[string]any{"q": "port"}, services.TokenMissing},
		// A retry replays (replayed true in both bodies); a reuse is refused.
		{"carol", "post", map[string]any{"kind": "ask", "body": "Retried?", "idempotency_key": "carol-1"}, ""},
		{"carol", "post", map[string]any{"kind": "ask", "body": "Retried?", "idempotency_key": "carol-1"}, ""},
		{"carol", "post", map[string]any{"kind": "ask", "body": "Reused?", "idempotency_key": "carol-1"}, services.IdempotencyKeyReused},
		{"carol", "post", map[string]any{"kind": "ask", "body": "Bad key", "idempotency_key": "not a key"}, services.InvalidBody},
		// Blobs (witness profile): over HTTP the bytes themselves.
		{"alice", "put_blob", map[string]any{"data": base64.StdEncoding.EncodeToString(parityBlob), "media_type": "text/plain"}, ""},
		{"bob", "put_blob", map[string]any{"data": base64.StdEncoding.EncodeToString(parityBlob), "media_type": "text/html"}, ""},
		{"reader", "put_blob", map[string]any{"data": "eA==", "media_type": "text/plain"}, services.TokenRightMissing},
		{"bob", "get_blob", map[string]any{"digest": services.BlobDigest(parityBlob)}, ""},
		{"bob", "get_blob", map[string]any{"digest": services.BlobDigest([]byte("absent"))}, services.BlobNotFound},
		{"bob", "get_blob", map[string]any{"digest": "sha256:nothex"}, services.InvalidBody},
		{"alice", "post", map[string]any{"kind": "assert", "body": "Logged.", "evidence": []any{map[string]any{"kind": "artifact", "ref": services.BlobDigest([]byte("absent"))}}}, services.BlobNotFound},
		{"alice", "post", map[string]any{"kind": "assert", "body": "Logged.", "evidence": []any{map[string]any{"kind": "artifact", "ref": services.BlobDigest(parityBlob)}}}, ""},
		// Statements: each world signs with a key of its own, so only the
		// refusals can be the same bytes (TestStatementsOverHTTP reads one).
		{"bob", "get_statement", map[string]any{"id": "th_9"}, services.ThreadNotFound},
		{"bob", "get_statement", map[string]any{"id": "cl_9"}, services.ClaimNotFound},
		{"bob", "get_statement", map[string]any{"id": "msg_1"}, services.InvalidBody},
		{"", "get_statement", map[string]any{"id": "th_1"}, services.TokenMissing},
	}
	for i := range postsPerMinute {
		// Numbered: the same words across threads are refused per party
		// (§14 rule 1, errata 2) before the rate limit would be reached.
		steps = append(steps, step{"spammer", "post", map[string]any{"kind": "ask", "body": fmt.Sprintf("again, %d", i)}, ""})
	}
	return append(steps, step{"spammer", "post", map[string]any{"kind": "ask", "body": "once more"}, services.RateLimited})
}

// parityBlob is the scenario's blob: bytes that are no text.
var parityBlob = []byte("\x00\x01 log line\n\xff")

// postsPerMinute is low enough for one caller to reach, high enough for the
// others never to.
const postsPerMinute = 20

// TestParityHTTPAndMCP runs the same scenario through HTTP and through MCP,
// each on a fresh world, and requires the same answers: same success or
// refusal, same reason, byte-identical bodies.
func TestParityHTTPAndMCP(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ *gorm.DB) {
		dialect, cfg := parityWorlds(t)
		overHTTP, overMCP := newWorld(t, dialect, cfg), newWorld(t, dialect, cfg)
		for i, s := range parityScenario() {
			httpFailed, httpBody := overHTTP.viaHTTP(t, s)
			mcpFailed, mcpBody := overMCP.viaMCP(t, s)
			if s.op == "get_blob" && !mcpFailed { // HTTP answers the bytes and their type alone
				mcpBody = map[string]any{"data": mcpBody["data"], "media_type": mcpBody["media_type"]}
			}
			label := s.op + " by " + s.who
			if httpFailed != mcpFailed || reasonOf(httpBody) != reasonOf(mcpBody) {
				t.Fatalf("step %d %s: HTTP failed=%v %q, MCP isError=%v %q", i, label, httpFailed, reasonOf(httpBody), mcpFailed, reasonOf(mcpBody))
			}
			if reasonOf(httpBody) != string(s.reason) {
				t.Fatalf("step %d %s: reason %q, want %q: %v", i, label, reasonOf(httpBody), s.reason, httpBody)
			}
			if !sameAnswer(httpBody, mcpBody) {
				h, _ := json.Marshal(httpBody)
				m, _ := json.Marshal(mcpBody)
				t.Fatalf("step %d %s: bodies differ\nHTTP %s\nMCP  %s", i, label, h, m)
			}
		}
	})
}

// parityWorlds is the dialect of the subtest t (dbtest.Each's) and the
// configuration of the scenario's worlds: a fixed clock, so that two
// worlds answer the same bytes, and its limits.
func parityWorlds(t *testing.T) (string, services.Config) {
	limits := services.DefaultLimits()
	limits.ThreadMaxMessages, limits.PostsPerMinute = 4, postsPerMinute
	return strings.TrimPrefix(t.Name()[strings.LastIndex(t.Name(), "/"):], "/"), services.Config{Limits: limits, Now: fixedClock}
}

// world is one server with the scenario's callers.
type world struct {
	srv    server
	tokens map[string]string
}

func newWorld(t *testing.T, dialect string, cfg services.Config) *world {
	return newWorldWith(t, dialect, cfg, nil)
}

// newWorldWith is newWorld with its MCP handler passed through wrap.
func newWorldWith(t *testing.T, dialect string, cfg services.Config, wrap func(http.Handler) http.Handler) *world {
	srv := startWith(t, dbtest.Fresh(t, dialect), cfg, wrap)
	w := &world{srv: srv, tokens: map[string]string{"": "", "forged": "prl_00_00"}}
	for _, name := range []string{"alice", "bob", "carol", "spammer"} {
		w.tokens[name] = srv.token(t, name)
	}
	w.tokens["reader"] = srv.token(t, "reader", services.RightRead)
	w.tokens["mod"] = srv.token(t, "mod", services.RightRead, services.RightWrite, services.RightLock)
	w.tokens["revoked"] = srv.token(t, "revoked")
	list, _ := srv.forum.ListTokens(t.Context())
	for _, tok := range list {
		if tok.Identity == "ainotes:revoked" {
			srv.forum.RevokeToken(t.Context(), tok.ID)
		}
	}
	return w
}

// viaHTTP maps the merged arguments onto the operation's route.
func (w *world) viaHTTP(t *testing.T, s step) (bool, map[string]any) {
	t.Helper()
	var op services.Operation
	for _, o := range services.Operations {
		if string(o.Name) == s.op {
			op = o
		}
	}
	path, query, body := op.Path, url.Values{}, map[string]any{}
	for k, v := range s.args {
		sv := strings.Trim(mustJSON(v), `"`)
		switch {
		case strings.Contains(path, "{"+k+"}"):
			path = strings.Replace(path, "{"+k+"}", sv, 1)
		case op.Method == "GET":
			query.Set(k, sv)
		default:
			body[k] = v
		}
	}
	var rd io.Reader
	if op.Method == "POST" {
		rd = bytes.NewReader([]byte(mustJSON(body)))
	}
	if op.Raw && op.Method == "POST" { // put_blob: the bytes themselves
		data, _ := base64.StdEncoding.DecodeString(body["data"].(string))
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(op.Method, w.srv.base+path+"?"+query.Encode(), rd)
	if tok := w.tokens[s.who]; tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if mt, ok := body["media_type"].(string); ok && op.Raw {
		req.Header.Set("Content-Type", mt)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if op.Raw && op.Method == "GET" && resp.StatusCode == 200 { // get_blob: the bytes, as MCP's data
		raw, _ := io.ReadAll(resp.Body)
		return false, map[string]any{"data": base64.StdEncoding.EncodeToString(raw), "media_type": resp.Header.Get("Content-Type")}
	}
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s: %v", s.op, err)
	}
	return resp.StatusCode >= 400, out
}

// viaMCP calls the tool with an MCP client. A token that does not
// authenticate never reaches a tool: the transport answers 401 with the
// refusal object in the JSON-RPC error's data, which stands in for the
// tool's answer.
func (w *world) viaMCP(t *testing.T, s step) (bool, map[string]any) {
	t.Helper()
	if s.who == "forged" || s.who == "revoked" || s.who == "" && s.reason == services.TokenMissing {
		// Answered at the HTTP level: 401 and the refusal in the
		// JSON-RPC error (docs/protocol.md §2.1, errata 2).
		call := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": s.op, "arguments": s.args}}
		resp, out := rawMCP(t, w.srv.base, w.tokens[s.who], "POST", mustJSON(call), nil)
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") || out["id"] != float64(1) {
			t.Fatalf("%s with a bad token: %d %q %v", s.op, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), out)
		}
		data, _ := dig(out, "error", "data").(map[string]any)
		return true, data
	}
	c := httpClient(t, w.srv.base+"/mcp", w.tokens[s.who])
	return callTool(t, c, s.op, s.args)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
