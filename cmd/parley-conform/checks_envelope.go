package main

import (
	"fmt"
	"strconv"
	"strings"
)

func envelopeChecks() []check {
	s := "envelope"
	raw := func(k *kit, role, body string) Reply {
		r, err := k.b.PostRaw(k.tok(role), []byte(body))
		if err != nil {
			panic(err)
		}
		return r
	}
	return []check{
		{s, "an unknown field is invalid_body naming it", "§3", false, false, func(k *kit) error {
			return refused(k.post("alice", map[string]any{"kind": "ask", "body": k.body("q"), "colour": "red"}), "invalid_body", "colour")
		}},
		{s, "a missing kind is invalid_body", "§3", false, false, func(k *kit) error {
			return refused(k.post("alice", map[string]any{"body": k.body("q")}), "invalid_body", "")
		}},
		{s, "an unknown kind is invalid_body", "§3", false, false, func(k *kit) error {
			return refused(k.post("alice", map[string]any{"kind": "shout", "body": k.body("q")}), "invalid_body", "kind")
		}},
		{s, "a missing body is invalid_body", "§3", false, false, func(k *kit) error {
			return refused(k.post("alice", map[string]any{"kind": "ask"}), "invalid_body", "body")
		}},
		{s, "an empty body is invalid_body", "§3", false, false, func(k *kit) error {
			return refused(k.post("alice", map[string]any{"kind": "ask", "body": ""}), "invalid_body", "body")
		}},
		{s, "a body of spaces only is invalid_body", "§3", false, false, func(k *kit) error {
			return refused(k.post("alice", map[string]any{"kind": "ask", "body": "   \t "}), "invalid_body", "body")
		}},
		{s, "a body with NUL is invalid_body", "§3", false, false, func(k *kit) error {
			return refused(k.post("alice", map[string]any{"kind": "ask", "body": k.body("a\x00b")}), "invalid_body", "body")
		}},
		{s, "a field of the wrong type is invalid_body", "§3", false, false, func(k *kit) error {
			return refused(k.post("alice", map[string]any{"kind": "ask", "body": 42}), "invalid_body", "body")
		}},
		{s, "parley other than \"1\" is invalid_body", "§3", false, false, func(k *kit) error {
			return refused(k.post("alice", map[string]any{"parley": "2", "kind": "ask", "body": k.body("q")}), "invalid_body", "parley")
		}},
		{s, "parley \"1\" is accepted", "§3", false, false, func(k *kit) error {
			return accepted(k.post("alice", map[string]any{"parley": "1", "kind": "ask", "body": k.body("q")}))
		}},
		{s, "null where a value is needed is invalid_body (body)", "§3 errata 1", false, false, func(k *kit) error {
			return refused(k.post("alice", map[string]any{"kind": "ask", "body": nil}), "invalid_body", "body")
		}},
		{s, "null provenance is invalid_body", "§3 errata 1", false, false, func(k *kit) error {
			return refused(k.post("alice", map[string]any{"kind": "ask", "body": k.body("q"), "provenance": nil}), "invalid_body", "provenance")
		}},
		{s, "null thread, parent, to and from.extension mean absent", "§3 errata 1", false, false, func(k *kit) error {
			r := k.post("alice", map[string]any{"kind": "ask", "body": k.body("q"), "thread": nil, "parent": nil, "to": nil, "from": map[string]any{"extension": nil}})
			if err := accepted(r); err != nil {
				return err
			}
			return expect(str(r.Body, "thread", "state") == "open", "a new thread should be open: %s", show(r.Body["thread"]))
		}},
		{s, "a body of body_max_chars code points is accepted", "§3, §9", false, false, func(k *kit) error {
			return accepted(k.post("alice", map[string]any{"kind": "ask", "body": padded(k, k.limit("body_max_chars"))}))
		}},
		{s, "a body of body_max_chars+1 code points is invalid_body", "§3, §9", false, false, func(k *kit) error {
			return refused(k.post("alice", map[string]any{"kind": "ask", "body": padded(k, k.limit("body_max_chars")+1)}), "invalid_body", "body")
		}},
		// Reading: the protocol names neither duplicate keys nor invalid
		// UTF-8; both are taken as the "unparsable JSON" of §2.2's
		// invalid_body, since JSON text is UTF-8 (RFC 8259 §8.1) and an
		// object with a name twice has no one meaning (RFC 8259 §4; I-JSON,
		// RFC 7493, forbids it). Over MCP invalid UTF-8 is not checked: an
		// unparsable JSON-RPC request is a JSON-RPC error there (§2).
		{s, "duplicate keys are invalid_body", "§3", false, false, func(k *kit) error {
			return refused(raw(k, "alice", fmt.Sprintf(`{"kind":"ask","body":%q,"body":%q}`, k.body("one"), k.body("two"))), "invalid_body", "")
		}},
		{s, "invalid UTF-8 is invalid_body", "§3", false, true, func(k *kit) error {
			return refused(raw(k, "alice", `{"kind":"ask","body":"bad `+"\xff\xfe"+` bytes"}`), "invalid_body", "")
		}},
		{s, "unparsable JSON is invalid_body", "§2.2", false, true, func(k *kit) error {
			return refused(raw(k, "alice", `{"kind":"ask","body":`), "invalid_body", "")
		}},
		{s, "to on an act other than ask is invalid_body", "§3", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			return refused(k.post("bob", map[string]any{"kind": "note", "thread": th, "body": k.body("n"), "to": map[string]any{"identity": k.who("alice")}}), "invalid_body", "to")
		}},
		{s, "state on an act other than mark is invalid_body", "§3", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			return refused(k.post("alice", map[string]any{"kind": "decide", "thread": th, "body": k.body("d"), "state": "closed"}), "invalid_body", "state")
		}},
		{s, "mark without state is invalid_body", "§3", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			return refused(k.post("alice", map[string]any{"kind": "mark", "thread": th, "body": k.body("m")}), "invalid_body", "state")
		}},
		{s, "mark with an unknown state is invalid_body", "§3", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			return refused(k.post("alice", map[string]any{"kind": "mark", "thread": th, "body": k.body("m"), "state": "finished"}), "invalid_body", "state")
		}},
		{s, "parent without thread is invalid_body", "§3", false, false, func(k *kit) error {
			_, root := k.ask("alice")
			return refused(k.post("bob", map[string]any{"kind": "note", "parent": root, "body": k.body("n")}), "invalid_body", "")
		}},
		{s, "an act other than ask or assert needs thread", "§3", false, false, func(k *kit) error {
			return refused(k.post("bob", map[string]any{"kind": "note", "body": k.body("n")}), "invalid_body", "thread")
		}},
		{s, "fields set by the server are ignored when sent", "§3", false, false, func(k *kit) error {
			r := k.post("alice", map[string]any{"kind": "ask", "body": k.body("q"), "id": "msg_1", "author_kind": "human", "created_at": "2000-01-01T00:00:00Z",
				"from": map[string]any{"identity": "human:mallory"}})
			if err := accepted(r); err != nil {
				return err
			}
			m := obj(r.Body, "message")
			return all(
				expect(str(m, "from", "identity") == k.who("alice"), "from.identity is %q, want the token's %q", str(m, "from", "identity"), k.who("alice")),
				expect(str(m, "author_kind") == "llm", "author_kind is %q, want llm", str(m, "author_kind")),
				expect(str(m, "created_at") != "2000-01-01T00:00:00Z", "created_at was taken from the client"))
		}},
		{s, "thread and parent take the plain number as well as the key", "§3", false, false, func(k *kit) error {
			th, root := k.ask("alice")
			n, _ := strconv.Atoi(strings.TrimPrefix(th, "th_"))
			p, _ := strconv.Atoi(strings.TrimPrefix(root, "msg_"))
			r := k.post("bob", map[string]any{"kind": "note", "thread": n, "parent": strconv.Itoa(p), "body": k.body("n")})
			if err := accepted(r); err != nil {
				return err
			}
			return all(
				expect(str(r.Body, "message", "thread") == th, "answer uses %q, want the key %q", str(r.Body, "message", "thread"), th),
				expect(str(r.Body, "message", "parent") == root, "parent is %q, want %q", str(r.Body, "message", "parent"), root))
		}},
		{s, "a stored message has the Message shape", "§8.1", false, false, func(k *kit) error {
			r := k.post("alice", map[string]any{"kind": "ask", "body": k.body("q"), "provenance": map[string]any{"model": "m", "client": "c"}})
			if err := accepted(r); err != nil {
				return err
			}
			m := obj(r.Body, "message")
			for _, key := range []string{"id", "parley", "kind", "thread", "parent", "from", "author_kind", "body", "provenance", "awaiting", "created_at"} {
				if _, ok := m[key]; !ok {
					return fmt.Errorf("message has no %s: %s", key, show(m))
				}
			}
			return all(
				expect(strings.HasPrefix(str(m, "id"), "msg_"), "message id %q is not msg_N", str(m, "id")),
				expect(str(m, "provenance", "model") == "m", "provenance not kept: %s", show(m["provenance"])))
		}},
		{s, "post answers 201 over HTTP", "§8.2", false, true, func(k *kit) error {
			r := k.post("alice", map[string]any{"kind": "ask", "body": k.body("q")})
			return expect(r.Status == 201, "status %d, want 201: %s", r.Status, r)
		}},
	}
}

// padded is a unique body of exactly n code points, most of them two
// bytes long in UTF-8, so that a server counting bytes fails.
func padded(k *kit, n int) string {
	tag := k.body("")
	tag = strings.Map(func(r rune) rune {
		if r == ' ' || r == '(' || r == ')' {
			return '-'
		}
		return r
	}, tag)
	if len([]rune(tag)) > n {
		tag = string([]rune(tag)[:n])
	}
	return tag + strings.Repeat("é", n-len([]rune(tag)))
}
