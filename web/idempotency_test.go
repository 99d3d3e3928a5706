package web_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"parley/services"
)

// postKeyed posts an envelope over HTTP with an Idempotency-Key header
// ("" for none).
func (a *api) postKeyed(token, key string, envelope map[string]any) reply {
	a.t.Helper()
	raw, _ := json.Marshal(envelope)
	req, err := http.NewRequest("POST", a.base+"/api/v1/messages", bytes.NewReader(raw))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	out := reply{status: resp.StatusCode, header: resp.Header, raw: body}
	if err := json.Unmarshal(body, &out.body); err != nil {
		a.t.Fatalf("invalid JSON %q: %v", body, err)
	}
	return out
}

// TestIdempotentPostOverHTTP: the key as the body's field or as the
// Idempotency-Key header; a replay answers 200 with Idempotent-Replayed:
// true and the first answer's body; a reuse is 409 idempotency_key_reused;
// a header and a field that differ are 400 invalid_body (docs/protocol.md
// §3, errata 2).
func TestIdempotentPostOverHTTP(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		alice := a.token("alice")
		ask := map[string]any{"kind": "ask", "body": "Which port?", "idempotency_key": "field-1"}
		first := a.postKeyed(alice, "", ask)
		if first.status != 201 || first.header.Get("Idempotent-Replayed") != "" || first.get("replayed") != nil {
			t.Fatalf("first post: %d %v %s", first.status, first.header, first.raw)
		}
		again := a.postKeyed(alice, "", ask)
		if again.status != 200 || again.header.Get("Idempotent-Replayed") != "true" || again.get("replayed") != true {
			t.Fatalf("replay: %d %v %s", again.status, again.header, again.raw)
		}
		delete(again.body, "replayed")
		if a, b := mustJSON(t, again.body), mustJSON(t, first.body); a != b {
			t.Fatalf("replay body\n%s\nfirst body\n%s", a, b)
		}

		// The header is the field: the header alone replays the field's post.
		noField := map[string]any{"kind": "ask", "body": "Which port?"}
		if r := a.postKeyed(alice, "field-1", noField); r.status != 200 || r.str("message", "id") != first.str("message", "id") {
			t.Fatalf("header replay: %d %s", r.status, r.raw)
		}
		viaHeader := a.postKeyed(alice, "header-1", map[string]any{"kind": "ask", "body": "Which host?"})
		if viaHeader.status != 201 {
			t.Fatalf("header post: %d %s", viaHeader.status, viaHeader.raw)
		}
		both := a.postKeyed(alice, "header-1", map[string]any{"kind": "ask", "body": "Which host?", "idempotency_key": "header-1"})
		if both.status != 200 || both.header.Get("Idempotent-Replayed") != "true" || both.str("message", "id") != viaHeader.str("message", "id") {
			t.Fatalf("equal header and field: %d %s", both.status, both.raw)
		}

		for name, r := range map[string]reply{
			"reused":           a.postKeyed(alice, "", map[string]any{"kind": "ask", "body": "Another question", "idempotency_key": "field-1"}),
			"header and field": a.postKeyed(alice, "one", map[string]any{"kind": "ask", "body": "x", "idempotency_key": "two"}),
			"bad header":       a.postKeyed(alice, "not a key", map[string]any{"kind": "ask", "body": "x"}),
		} {
			want := map[string]struct {
				status int
				reason services.Reason
			}{"reused": {409, services.IdempotencyKeyReused}, "header and field": {400, services.InvalidBody}, "bad header": {400, services.InvalidBody}}[name]
			if r.status != want.status || r.reason() != string(want.reason) || r.field() != "idempotency_key" {
				t.Errorf("%s: %d %s, want %d %s on idempotency_key", name, r.status, r.raw, want.status, want.reason)
			}
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
