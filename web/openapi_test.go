package web_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"parley/migrations/dbtest"
	"parley/services"
	"parley/web"
)

// TestOpenAPIRoutesMatchTheApp fails when an API route is served but not
// documented, or documented but not served.
func TestOpenAPIRoutesMatchTheApp(t *testing.T) {
	forum := services.New(dbtest.Fresh(t, "sqlite"), services.Config{})
	app, err := web.New(forum, web.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var served []string
	for _, r := range app.GetRoutes(true) {
		machine := strings.HasPrefix(r.Path, "/api/v1/") || r.Path == "/.well-known/parley.json" || r.Path == "/.well-known/mcp/server-card.json" || r.Path == "/.well-known/agent-card.json" || r.Path == "/healthz" || r.Path == "/readyz"
		if r.Method == "HEAD" || r.Method == "USE" || !machine {
			continue // HTML pages for people are not part of the API
		}
		served = append(served, r.Method+" "+r.Path)
	}
	doc := openAPI(t, startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{}))
	var documented []string
	for path, ops := range doc["paths"].(map[string]any) {
		for method := range ops.(map[string]any) {
			documented = append(documented, strings.ToUpper(method)+" "+strings.NewReplacer("{", ":", "}", "").Replace(path))
		}
	}
	sort.Strings(served)
	sort.Strings(documented)
	if !slices.Equal(served, documented) {
		t.Fatalf("served routes\n  %v\ndocumented\n  %v", served, documented)
	}
	for _, op := range services.Operations {
		route := op.Method + " " + strings.NewReplacer("{", ":", "}", "").Replace(op.Path)
		if !slices.Contains(served, route) || !strings.HasPrefix(op.HTTP, op.Method+" "+op.Path) {
			t.Errorf("operation %s: %q is not served as the manifest says (%s)", op.Name, route, op.HTTP)
		}
	}
}

// TestOpenAPIFieldsMatchResponses checks real responses of every operation,
// refusals included, against the documented schemas: a field sent but not
// documented, or documented as required but not sent, fails.
func TestOpenAPIFieldsMatchResponses(t *testing.T) {
	a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	doc := openAPI(t, a)
	alice, bob := a.token("alice"), a.token("bob")
	mod := a.token("mod", services.RightRead, services.RightWrite, services.RightLock)
	root := a.post(alice, map[string]any{"kind": "ask", "body": "q", "provenance": map[string]any{"model": "m"}})
	th := root.str("thread", "id")
	a.post(bob, map[string]any{"kind": "ask", "thread": th, "to": map[string]any{"identity": "ainotes:alice", "extension": "x"}, "body": "to?"})
	a.post(bob, map[string]any{"kind": "answer", "thread": th, "body": "a", "from": map[string]any{"extension": "w"}})
	a.post(mod, map[string]any{"kind": "mark", "thread": th, "state": "answered", "body": "confirming"})
	a.post(alice, map[string]any{"kind": "mark", "thread": th, "state": "closed", "body": "closing"})
	vera := a.token("vera", services.RightRead, services.RightWrite, services.RightVerify)
	claim := a.post(alice, map[string]any{"kind": "assert", "body": "claim", "valid_until": "2999-01-01T00:00:00Z",
		"evidence": []map[string]any{{"kind": "url", "ref": "https://x", "note": "n"}}})
	cth, cl := claim.str("thread", "id"), claim.str("claim", "id")
	a.post(bob, map[string]any{"kind": "attest", "thread": cth, "claim": cl, "body": "yes", "evidence": []map[string]any{{"kind": "hash", "ref": "h"}}})
	a.post(mod, map[string]any{"kind": "refute", "thread": cth, "claim": cl, "body": "no", "evidence": []map[string]any{{"kind": "log", "ref": "l"}}})
	a.post(alice, map[string]any{"kind": "assert", "thread": cth, "from": map[string]any{"extension": "w"}, "supersedes": []string{cl}, "body": "newer"})

	calls := []struct {
		op, method, path, token string
		body                    any
	}{
		{"get_manifest", "GET", "/api/v1/manifest", "", nil},
		{"whoami", "GET", "/api/v1/me", mod, nil},
		{"post", "POST", "/api/v1/messages", bob, map[string]any{"kind": "note", "thread": th, "body": "n"}},
		{"read_thread", "GET", "/api/v1/threads/" + th, bob, nil},
		{"read_thread", "GET", "/api/v1/threads/" + th + "?branch=2&depth=3&limit=2", bob, nil},
		{"list_identities", "GET", "/api/v1/identities", bob, nil},
		{"put_blob", "POST", "/api/v1/blobs", bob, []byte("hello, blob")},
		{"list_threads", "GET", "/api/v1/threads?confirmed=false", mod, nil},
		{"list_threads", "GET", "/api/v1/threads?limit=1", bob, nil},
		{"inbox", "GET", "/api/v1/inbox", alice, nil},
		{"get_events", "GET", "/api/v1/events", bob, nil},
		{"confirm", "POST", "/api/v1/threads/" + th + "/confirm", mod, map[string]any{"state": "closed"}},
		{"post", "POST", "/api/v1/messages", bob, map[string]any{"kind": "note", "thread": th, "body": "locked now"}},
		{"get_claim", "GET", "/api/v1/claims/" + cl, bob, nil},
		{"list_claims", "GET", "/api/v1/claims?limit=1", bob, nil},
		{"post", "POST", "/api/v1/messages", bob, map[string]any{"kind": "attest", "thread": cth, "claim": "cl_2", "body": "yes", "evidence": []map[string]any{{"kind": "url", "ref": "https://y"}}}},
		{"post", "POST", "/api/v1/messages", vera, map[string]any{"kind": "verify", "thread": cth, "claim": "cl_2", "body": "sealed", "evidence": []map[string]any{{"kind": "url", "ref": "https://z"}}}},
		{"get_events", "GET", "/api/v1/events?thread=" + cth, bob, nil},
		{"get_claim", "GET", "/api/v1/claims/cl_9", bob, nil},
	}
	for _, c := range calls {
		r := a.do(c.method, c.path, c.token, c.body)
		path := strings.Split(c.path, "?")[0]
		if strings.HasPrefix(path, "/api/v1/threads/") {
			path = strings.Replace(path, th, "{thread}", 1)
		}
		if strings.HasPrefix(path, "/api/v1/claims/") {
			path = "/api/v1/claims/{claim}"
		}
		responses := dig(doc, "paths", path, strings.ToLower(c.method), "responses").(map[string]any)
		status := fmt.Sprint(r.status)
		if r.status >= 400 {
			status = "default"
		}
		schema := dig(responses, status, "content", "application/json", "schema")
		if schema == nil {
			t.Fatalf("%s: no schema for status %s", c.op, status)
		}
		var body any
		json.Unmarshal(r.raw, &body)
		for _, problem := range conform(doc, body, schema.(map[string]any), c.op) {
			t.Error(problem)
		}
	}
}

func openAPI(t *testing.T, a *api) map[string]any {
	t.Helper()
	r := a.ok(200, "GET", "/api/v1/openapi.json", "", nil)
	if r.str("openapi") != "3.1.0" {
		t.Fatalf("not OpenAPI 3.1: %s", r.raw[:80])
	}
	return r.body
}

// conform walks a JSON value along its schema and lists the differences in
// object fields. It follows $ref, oneOf, items and properties.
func conform(doc map[string]any, v any, schema map[string]any, at string) []string {
	if ref, ok := schema["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		target, ok := dig(doc, "components", "schemas", name).(map[string]any)
		if !ok {
			return []string{at + ": dangling $ref " + ref}
		}
		return conform(doc, v, target, at)
	}
	if alts, ok := schema["oneOf"].([]any); ok {
		if v == nil {
			return nil // the null alternative; a test of its own would be the schema validator's
		}
		var best []string
		for i, alt := range alts {
			if dig(alt, "type") == "null" {
				continue
			}
			problems := conform(doc, v, alt.(map[string]any), at)
			if len(problems) == 0 {
				return nil
			}
			if i == 0 || len(problems) < len(best) {
				best = problems
			}
		}
		return best
	}
	switch val := v.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		if props == nil {
			return nil // a free-form object (e.g. a map)
		}
		var problems []string
		for key, sub := range val {
			p, ok := props[key].(map[string]any)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: field %q is sent but not documented", at, key))
				continue
			}
			problems = append(problems, conform(doc, sub, p, at+"."+key)...)
		}
		req, _ := schema["required"].([]any)
		for _, r := range req {
			if _, ok := val[r.(string)]; !ok {
				problems = append(problems, fmt.Sprintf("%s: required field %q is documented but not sent", at, r))
			}
		}
		return problems
	case []any:
		items, _ := schema["items"].(map[string]any)
		var problems []string
		for i, it := range val {
			if items != nil {
				problems = append(problems, conform(doc, it, items, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
		return problems
	}
	return nil
}
