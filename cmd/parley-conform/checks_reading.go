package main

import (
	"fmt"
	"slices"
	"strings"
)

// inboxAll pages role's inbox from since to its end; it returns the
// items' threads and the last cursor.
func (k *kit) inboxAll(role, since string, addressed bool, extra map[string]any) ([]string, string) {
	var threads []string
	cursor := since
	for page := 0; page < 100; page++ {
		args := map[string]any{"limit": k.limit("page_max")}
		for key, v := range extra {
			args[key] = v
		}
		if cursor != "" {
			args["since"] = cursor
		}
		if addressed {
			args["addressed"] = true
		}
		r := k.call(role, "inbox", args)
		if !r.OK() {
			panic(fmt.Errorf("inbox: %s", r))
		}
		items := list(r.Body, "items")
		for _, it := range items {
			threads = append(threads, str(it, "thread", "id"))
		}
		next := str(r.Body, "cursor")
		if len(items) == 0 || next == "" || next == cursor {
			return threads, next
		}
		cursor = next
	}
	return threads, cursor
}

func (k *kit) inboxHas(role, thread string, addressed bool) bool {
	threads, _ := k.inboxAll(role, "", addressed, nil)
	return slices.Contains(threads, thread)
}

func readingChecks() []check {
	s := "reading"
	return []check{
		{s, "read_thread nests messages by parent, each level in creation order", "§8", false, false, func(k *kit) error {
			th, root := k.ask("alice")
			r1, _ := k.must("bob", map[string]any{"kind": "note", "thread": th, "parent": root, "body": k.body("r1")})
			r2, _ := k.must("carol", map[string]any{"kind": "note", "thread": th, "parent": root, "body": k.body("r2")})
			r1a, _ := k.must("carol", map[string]any{"kind": "note", "thread": th, "parent": str(r1, "id"), "body": k.body("r1a")})
			r := k.call("alice", "read_thread", map[string]any{"thread": th})
			if err := accepted(r); err != nil {
				return err
			}
			msgs := list(r.Body, "messages")
			if len(msgs) != 1 || str(msgs[0], "id") != root {
				return fmt.Errorf("messages should hold the root alone: %s", show(msgs))
			}
			rep := list(msgs[0], "replies")
			if len(rep) != 2 || str(rep[0], "id") != str(r1, "id") || str(rep[1], "id") != str(r2, "id") {
				return fmt.Errorf("the root's replies should be [%s %s]: %s", str(r1, "id"), str(r2, "id"), show(rep))
			}
			sub := list(rep[0], "replies")
			return all(
				expect(len(sub) == 1 && str(sub[0], "id") == str(r1a, "id"), "%s's replies should be [%s]: %s", str(r1, "id"), str(r1a, "id"), show(sub)),
				expect(obj(r.Body, "thread") != nil && str(r.Body, "thread", "id") == th, "read_thread has no thread"))
		}},
		{s, "the Thread shape carries its keys", "§8.1", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			t := k.thread(th)
			for _, key := range []string{"id", "title", "state", "state_origin", "state_confirmed_at", "confirmed", "state_of_record", "state_label", "awaiting", "created_by", "created_at", "updated_at", "message_count"} {
				if _, ok := t[key]; !ok {
					return fmt.Errorf("thread has no %s: %s", key, show(t))
				}
			}
			return nil
		}},
		{s, "read_thread of an unknown thread is thread_not_found", "§2.2, §8", false, false, func(k *kit) error {
			return refused(k.call("alice", "read_thread", map[string]any{"thread": "th_999999999"}), "thread_not_found", "")
		}},
		{s, "events record every state change in order, with origin and confirmation", "§8, §8.1", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			k.must("bob", map[string]any{"kind": "answer", "thread": th, "body": k.body("a")})
			k.must("mod", map[string]any{"kind": "decide", "thread": th, "body": k.body("d")})
			r := k.call("alice", "get_events", map[string]any{"thread": th})
			if err := accepted(r); err != nil {
				return err
			}
			ev := list(r.Body, "events")
			var to []string
			for _, e := range ev {
				to = append(to, str(e, "type")+":"+str(e, "to_state"))
				for _, key := range []string{"id", "thread", "type", "from_state", "to_state", "origin", "label", "actor", "message", "at", "confirmed_at"} {
					if _, ok := obj(e)[key]; !ok {
						return fmt.Errorf("event has no %s: %s", key, show(e))
					}
				}
			}
			want := []string{"state:open", "state:answered", "state:decided"}
			if !slices.Equal(to, want) {
				return fmt.Errorf("events %v, want %v", to, want)
			}
			return all(
				expect(str(ev[1], "origin") == "llm" && dig(ev[1], "confirmed_at") == nil, "bob's proposal event: %s", show(ev[1])),
				expect(dig(ev[2], "confirmed_at") != nil, "the lock holder's event is confirmed: %s", show(ev[2])))
		}},
		{s, "get_events since a cursor returns only what is new", "§8", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			r := k.call("alice", "get_events", map[string]any{"thread": th})
			cursor := str(r.Body, "cursor")
			k.must("mod", map[string]any{"kind": "decide", "thread": th, "body": k.body("d")})
			r = k.call("alice", "get_events", map[string]any{"thread": th, "since": cursor})
			ev := list(r.Body, "events")
			return expect(len(ev) == 1 && str(ev[0], "to_state") == "decided", "since the cursor: %s", show(ev))
		}},
		{s, "the inbox lists a turn awaiting the caller, and a cursor skips what was seen", "§8", false, false, func(k *kit) error {
			_, cursor := k.inboxAll("bob", "", false, nil)
			th, _ := k.ask("alice", "to", map[string]any{"identity": k.who("bob")})
			got, cursor2 := k.inboxAll("bob", cursor, false, nil)
			if !slices.Contains(got, th) {
				return fmt.Errorf("bob's inbox since %q lacks %s: %v", cursor, th, got)
			}
			again, _ := k.inboxAll("bob", cursor2, false, nil)
			return expect(!slices.Contains(again, th), "the cursor %q returned %s again", cursor2, th)
		}},
		{s, "the inbox lists turns awaiting anyone", "§8", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			return expect(k.inboxHas("bob", th, false), "bob's inbox lacks %s awaiting anyone", th)
		}},
		{s, "the inbox never hands an agent its own question", "§8", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			return expect(!k.inboxHas("alice", th, false), "alice's inbox lists her own question %s", th)
		}},
		{s, "inbox items come in the order their turn opened", "§8", false, false, func(k *kit) error {
			_, cursor := k.inboxAll("bob", "", false, nil)
			a, _ := k.ask("alice", "to", map[string]any{"identity": k.who("bob")})
			b, _ := k.ask("carol", "to", map[string]any{"identity": k.who("bob")})
			got, _ := k.inboxAll("bob", cursor, false, nil)
			return expect(slices.Index(got, a) >= 0 && slices.Index(got, a) < slices.Index(got, b), "order %v, want %s before %s", got, a, b)
		}},
		{s, "addressed=true lists only the turns that name the caller", "§8 errata 2", false, false, func(k *kit) error {
			_, cursor := k.inboxAll("bob", "", true, nil)
			mine, _ := k.ask("alice", "to", map[string]any{"identity": k.who("bob")})
			anyone, _ := k.ask("carol")
			got, _ := k.inboxAll("bob", cursor, true, nil)
			return all(
				expect(slices.Contains(got, mine), "addressed inbox lacks %s, addressed to bob: %v", mine, got),
				expect(!slices.Contains(got, anyone), "addressed inbox lists %s, awaiting anyone: %v", anyone, got))
		}},
		{s, "an addressed cursor is invalid_body in the full inbox", "§8 errata 2", false, false, func(k *kit) error {
			_, cursor := k.inboxAll("bob", "", true, nil)
			if cursor == "" {
				return fmt.Errorf("the addressed inbox gave no cursor")
			}
			return refused(k.call("bob", "inbox", map[string]any{"since": cursor}), "invalid_body", "since")
		}},
		{s, "addressed with a value other than true or false is invalid_body", "§8 errata 2", false, false, func(k *kit) error {
			return refused(k.call("bob", "inbox", map[string]any{"addressed": "maybe"}), "invalid_body", "addressed")
		}},
		{s, "a malformed cursor is invalid_body", "§8", false, false, func(k *kit) error {
			return all(
				refused(k.call("bob", "inbox", map[string]any{"since": "%%not-a-cursor%%"}), "invalid_body", "since"),
				refused(k.call("bob", "list_threads", map[string]any{"cursor": "%%not-a-cursor%%"}), "invalid_body", "cursor"))
		}},
		{s, "the inbox hides threads whose state of record is terminal", "§8", false, false, func(k *kit) error {
			th, _ := k.ask("alice", "to", map[string]any{"identity": k.who("bob")})
			k.must("mod", map[string]any{"kind": "note", "thread": th, "body": k.body("n")})
			k.must("mod", map[string]any{"kind": "mark", "state": "obsolete", "thread": th, "body": k.body("m")})
			return expect(!k.inboxHas("bob", th, false), "bob's inbox lists %s, confirmed obsolete", th)
		}},
		{s, "list_threads pages by most recent activity first", "§8", false, false, func(k *kit) error {
			a, _ := k.ask("alice")
			b, _ := k.ask("alice")
			k.must("bob", map[string]any{"kind": "note", "thread": a, "body": k.body("n")})
			r := k.call("alice", "list_threads", map[string]any{"limit": 10})
			if err := accepted(r); err != nil {
				return err
			}
			var ids []string
			for _, t := range list(r.Body, "threads") {
				ids = append(ids, str(t, "id"))
			}
			ia, ib := slices.Index(ids, a), slices.Index(ids, b)
			_, hasCursor := r.Body["cursor"]
			return all(expect(ia >= 0 && ib >= 0 && ia < ib, "order %v: want %s (recent note) before %s", ids, a, b), expect(hasCursor, "no cursor key"))
		}},
	}
}

func limitChecks() []check {
	s := "limits"
	return []check{
		{s, "the manifest carries every limit of §9 as a number", "§9", false, false, func(k *kit) error {
			for _, l := range referenceLimits {
				if _, ok := k.limits[l]; !ok {
					return fmt.Errorf("limit %s missing: %s", l, show(k.manifest["limits"]))
				}
			}
			return nil
		}},
		{s, "an extension of extension_max_chars is accepted, one more is invalid_body", "§9", false, false, func(k *kit) error {
			n := k.limit("extension_max_chars")
			ext := "e"
			for len(ext) < n {
				ext += "x"
			}
			return all(
				accepted(k.post("alice", map[string]any{"kind": "ask", "body": k.body("q"), "from": map[string]any{"extension": ext}})),
				refused(k.post("alice", map[string]any{"kind": "ask", "body": k.body("q"), "from": map[string]any{"extension": ext + "x"}}), "invalid_body", ""))
		}},
		{s, "provenance fields of provenance_field_max_chars are accepted, one more is invalid_body", "§9", false, false, func(k *kit) error {
			n := k.limit("provenance_field_max_chars")
			v := []rune{}
			for len(v) < n {
				v = append(v, 'ü')
			}
			return all(
				accepted(k.post("alice", map[string]any{"kind": "ask", "body": k.body("q"), "provenance": map[string]any{"model": string(v)}})),
				refused(k.post("alice", map[string]any{"kind": "ask", "body": k.body("q"), "provenance": map[string]any{"model": string(v) + "x"}}), "invalid_body", ""))
		}},
		{s, "a limit of page_max is accepted, page_max+1 is invalid_body", "§8, §9", false, false, func(k *kit) error {
			n := k.limit("page_max")
			return all(
				accepted(k.call("alice", "list_threads", map[string]any{"limit": n})),
				refused(k.call("alice", "list_threads", map[string]any{"limit": n + 1}), "invalid_body", ""))
		}},
		{s, "a request over request_max_bytes is invalid_body", "§9", false, false, func(k *kit) error {
			n := k.limit("request_max_bytes")
			big := make([]byte, n+10)
			for i := range big {
				big[i] = 'x'
			}
			return refused(k.post("alice", map[string]any{"kind": "ask", "body": k.body("q"), "provenance": map[string]any{"model": string(big)}}), "invalid_body", "")
		}},
		{s, "a thread holding thread_max_messages refuses the next: limit_exceeded", "§9", false, false, func(k *kit) error {
			n := k.limit("thread_max_messages")
			if n > 5000 {
				return errSkip("thread_max_messages %d is too many to post", n)
			}
			// A human every tenth message keeps the guard's thread rule out.
			th, root := k.ask("alice")
			roles := []string{"human", "bob", "carol", "bob", "carol", "bob", "carol", "bob", "carol", "bob"}
			for i := 1; i < n; i++ {
				k.must(roles[i%len(roles)], map[string]any{"kind": "note", "thread": th, "parent": root, "body": k.body("fill")})
			}
			return refused(k.post("human", map[string]any{"kind": "note", "thread": th, "parent": root, "body": k.body("one too many")}), "limit_exceeded", "")
		}},
		{s, "a reply at level thread_max_depth+1 is limit_exceeded", "§9", false, false, func(k *kit) error {
			depth := k.limit("thread_max_depth")
			if depth > 200 {
				return errSkip("thread_max_depth %d is too deep to walk", depth)
			}
			// A human every other level keeps the guard's chain rule out.
			th, parent := k.ask("alice")
			for level := 2; level <= depth; level++ {
				role := "human"
				if level%2 == 1 {
					role = "bob"
				}
				m, _ := k.must(role, map[string]any{"kind": "note", "thread": th, "parent": parent, "body": k.body("deeper")})
				parent = str(m, "id")
			}
			role := "bob"
			if (depth+1)%2 == 0 {
				role = "human"
			}
			return refused(k.post(role, map[string]any{"kind": "note", "thread": th, "parent": parent, "body": k.body("too deep")}), "limit_exceeded", "")
		}},
	}
}

func refusalChecks() []check {
	s := "refusals"
	obj := func(r Reply) error {
		e := obj(r.Body, "error")
		if e == nil {
			return fmt.Errorf("no refusal object {error: …}: %s", r)
		}
		return all(
			expect(str(e, "reason") != "" && str(e, "message") != "" && num(e, "status") > 0, "the refusal object needs reason, status and message: %s", show(e)),
			expect(r.Status == int(num(e, "status")), "the status %d differs from error.status %v", r.Status, e["status"]),
			expect(flaggedAsError(r), "over MCP a refusal is a tool result with isError: %s", r))
	}
	return []check{
		{s, "a refusal carries {error: {reason, status, message}} and its status", "§2.2", false, false, func(k *kit) error {
			return obj(k.post("alice", map[string]any{"kind": "shout", "body": k.body("q")}))
		}},
		{s, "thread_not_found is 404", "§2.2", false, false, func(k *kit) error {
			r := k.post("bob", map[string]any{"kind": "note", "thread": "th_999999999", "body": k.body("n")})
			return all(refused(r, "thread_not_found", ""), expect(r.Status == 404, "status %d", r.Status), obj(r))
		}},
		{s, "message_not_found is 404", "§2.2", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			r := k.post("bob", map[string]any{"kind": "note", "thread": th, "parent": "msg_999999999", "body": k.body("n")})
			return all(refused(r, "message_not_found", ""), expect(r.Status == 404, "status %d", r.Status))
		}},
		{s, "a parent of another thread is parent_mismatch", "§2.2", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			_, other := k.ask("alice")
			r := k.post("bob", map[string]any{"kind": "note", "thread": th, "parent": other, "body": k.body("n")})
			return all(refused(r, "parent_mismatch", ""), expect(r.Status == 409, "status %d", r.Status))
		}},
		{s, "an ask to an unknown identity is identity_not_found", "§2.2", false, false, func(k *kit) error {
			r := k.post("alice", map[string]any{"kind": "ask", "body": k.body("q"), "to": map[string]any{"identity": str(k.manifest, "realm") + ":nobody-" + k.run}})
			return all(refused(r, "identity_not_found", ""), expect(r.Status == 404, "status %d", r.Status))
		}},
		{s, "no token is token_missing", "§2.1, §2.2", false, false, func(k *kit) error {
			r := k.call("", "whoami", nil)
			if k.b.Name() == "mcp" && r.Header.Get("WWW-Authenticate") == "" {
				return fmt.Errorf("MCP over HTTP answers a call without a token with 401 and WWW-Authenticate (errata 2): %s", r)
			}
			return all(refused(r, "token_missing", ""), expect(r.Status == 401, "status %d", r.Status))
		}},
		{s, "an unknown token is token_invalid with 401", "§2.1 errata 2, §2.2", false, false, func(k *kit) error {
			if st, ok := k.b.(*mcpStdio); ok {
				exited, stderr, err := st.refusedAtStart("prl_unknown_" + k.run)
				if err != nil {
					return err
				}
				// Reading: "printing the refusal" is taken as a message on
				// stderr and a failed exit; the text does not say the reason
				// must be printed as its identifier.
				return expect(exited && strings.TrimSpace(stderr) != "", "over stdio a bad token stops the command at start, printing the refusal: exited %v, stderr %q", exited, stderr)
			}
			r, err := k.b.Call("prl_unknown_"+k.run, "whoami", nil)
			if err != nil {
				return err
			}
			if k.b.Name() == "mcp" && r.Header.Get("WWW-Authenticate") == "" {
				return fmt.Errorf("MCP over HTTP answers a bad token with 401 and WWW-Authenticate: %s", r)
			}
			return all(refused(r, "token_invalid", ""), expect(r.Status == 401, "status %d", r.Status))
		}},
		{s, "token_right_missing is 403", "§2.2", false, false, func(k *kit) error {
			r := k.post("reader", map[string]any{"kind": "ask", "body": k.body("q")})
			return all(refused(r, "token_right_missing", ""), expect(r.Status == 403, "status %d", r.Status), obj(r))
		}},
		{s, "thread_locked and transition_invalid are 409", "§2.2", false, false, func(k *kit) error {
			r := k.post("bob", map[string]any{"kind": "note", "thread": k.at("closed"), "body": k.body("n")})
			r2 := k.post("mod", map[string]any{"kind": "decide", "thread": k.at("decided"), "body": k.body("d")})
			return all(refused(r, "thread_locked", ""), expect(r.Status == 409, "status %d", r.Status),
				refused(r2, "transition_invalid", ""), expect(r2.Status == 409, "status %d", r2.Status))
		}},
	}
}

// flaggedAsError: a refusal over MCP is a tool result with isError true; over
// HTTP there is no such flag.
func flaggedAsError(r Reply) bool {
	if len(r.Wire) >= 3 && r.Wire[:3] == "MCP" {
		return r.IsError || r.Status == 401
	}
	return true
}
