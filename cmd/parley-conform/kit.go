package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// check is one conformance check: a MUST of docs/protocol.md, named by
// its section (ref) and run over one binding.
type check struct {
	section string // the kit's section: manifest, envelope, acts, …, or profile:<name>
	name    string
	ref     string // the protocol section, e.g. "§5.2 rule 2"
	slow    bool   // needs time taken from the manifest's limits; --fast skips it
	httpy   bool   // only over the HTTP binding (raw HTTP features)
	fn      func(k *kit) error
}

// skipError marks a check that does not apply (a profile's limit off, an
// HTTP-only feature over MCP).
type skipError string

func (e skipError) Error() string { return string(e) }
func errSkip(format string, args ...any) error {
	return skipError(fmt.Sprintf(format, args...))
}

// kit is the state of a run over one binding.
type kit struct {
	b        Binding
	manifest map[string]any
	limits   map[string]float64
	ids      map[string]*ident // role -> identity
	base     string            // the server's base URL
	run      string            // a tag making bodies unique across runs
	seq      *atomic.Int64
	fresh    func(name, rights string) (token string, err error) // an identity of its own for one check
	opts     options
	peer     *peerForum
}

type ident struct {
	Role     string   `json:"role"`
	Token    string   `json:"token"`
	Identity string   `json:"identity"`
	Rights   []string `json:"rights,omitempty"`
	Owner    string   `json:"owner,omitempty"`
}

func (k *kit) tok(role string) string {
	if role == "" {
		return ""
	}
	id, ok := k.ids[role]
	if !ok {
		panic(skipError("no token for role " + role))
	}
	return id.Token
}

func (k *kit) who(role string) string { return k.ids[role].Identity }

func (k *kit) limit(name string) int {
	v, ok := k.limits[name]
	if !ok {
		panic(fmt.Errorf("the manifest has no limit %s", name))
	}
	return int(v)
}

// body is a body no identity has written before (the guard profile
// refuses repeated bodies).
func (k *kit) body(text string) string {
	return fmt.Sprintf("%s (conform %s #%d)", text, k.run, k.seq.Add(1))
}

// call runs an operation, waiting out rate_limited answers (the kit adapts
// to the server's limits rather than failing on them).
func (k *kit) call(role, op string, args map[string]any) Reply {
	for attempt := 0; ; attempt++ {
		r, err := k.b.Call(k.tok(role), op, args)
		if err != nil {
			panic(err)
		}
		if r.Reason() == "rate_limited" && attempt < 20 {
			time.Sleep(time.Duration(max(1, num(r.Body, "error", "retry_after"))) * time.Second)
			continue
		}
		return r
	}
}

func (k *kit) post(role string, env map[string]any) Reply { return k.call(role, "post", env) }

// must posts and fails the check when the post is refused; it returns the
// stored message and the thread after it.
func (k *kit) must(role string, env map[string]any) (msg, th map[string]any) {
	r := k.post(role, env)
	if !r.OK() {
		panic(fmt.Errorf("setup post %v by %s was refused: %s", env["kind"], role, r))
	}
	return obj(r.Body, "message"), obj(r.Body, "thread")
}

// ask opens a thread by role and returns its id and root message id.
func (k *kit) ask(role string, extra ...any) (thread, root string) {
	env := map[string]any{"kind": "ask", "body": k.body("a question")}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i].(string)] = extra[i+1]
	}
	m, t := k.must(role, env)
	return str(t, "id"), str(m, "id")
}

func (k *kit) thread(id string) map[string]any {
	r := k.call("alice", "read_thread", map[string]any{"thread": id})
	if !r.OK() {
		panic(fmt.Errorf("read_thread %s: %s", id, r))
	}
	return obj(r.Body, "thread")
}

// refused checks a refusal's reason and, when given, its field.
func refused(r Reply, reason, field string) error {
	if r.OK() {
		return fmt.Errorf("want refusal %s, got success: %s", reason, r)
	}
	if r.Reason() != reason {
		return fmt.Errorf("want reason %s, got %q: %s", reason, r.Reason(), r)
	}
	if field != "" && r.Field() != field {
		return fmt.Errorf("want %s with field %q, got field %q: %s", reason, field, r.Field(), r)
	}
	return nil
}

func accepted(r Reply) error {
	if !r.OK() {
		return fmt.Errorf("want success, got %s", r)
	}
	return nil
}

func expect(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// all returns the first error of errs.
func all(errs ...error) error { return errors.Join(firstNonNil(errs)...) }

func firstNonNil(errs []error) []error {
	for _, e := range errs {
		if e != nil {
			return []error{e}
		}
	}
	return nil
}

// JSON helpers: dig follows keys and indexes into decoded JSON.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch key := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[key]
		case int:
			l, _ := v.([]any)
			if key < 0 || key >= len(l) {
				return nil
			}
			v = l[key]
		}
	}
	return v
}

func str(v any, path ...any) string { s, _ := dig(v, path...).(string); return s }
func num(v any, path ...any) float64 {
	f, _ := dig(v, path...).(float64)
	return f
}
func obj(v any, path ...any) map[string]any { m, _ := dig(v, path...).(map[string]any); return m }
func list(v any, path ...any) []any         { l, _ := dig(v, path...).([]any); return l }

func show(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// awaits reports whether a message's or thread's awaiting names identity.
func awaits(v map[string]any, identity string) bool {
	return str(v, "awaiting", "identity") == identity
}

func has(l []any, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func (k *kit) manifestURL() string { return k.base + "/api/v1/manifest" }
