package main

import "fmt"

func recordChecks() []check {
	s := "record"
	return []check{
		{s, "a proposal shows state and state_of_record beneath it", "§5.2", false, false, func(k *kit) error {
			th := k.at("answered")
			_, t := k.must("alice", map[string]any{"kind": "mark", "state": "closed", "thread": th, "body": k.body("m")})
			return expect(str(t, "state") == "closed" && t["confirmed"] == false && str(t, "state_of_record") == "answered", "proposal: %s", show(t))
		}},
		{s, "a proposed closed does not lock", "§5.2 rule 1", false, false, func(k *kit) error {
			th := k.at("answered")
			k.must("alice", map[string]any{"kind": "mark", "state": "closed", "thread": th, "body": k.body("m")})
			return accepted(k.post("bob", map[string]any{"kind": "note", "thread": th, "body": k.body("n")}))
		}},
		{s, "a proposed side state does not end the thread", "§5.2 rule 1", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			k.must("alice", map[string]any{"kind": "mark", "state": "deferred", "thread": th, "body": k.body("m")})
			return accepted(k.post("bob", map[string]any{"kind": "note", "thread": th, "body": k.body("n")}))
		}},
		{s, "a model's mark never lands behind the state of record", "§5.2 rule 2", false, false, func(k *kit) error {
			// Record answered (confirmed); the creator proposes closed, then
			// reopens its own proposal: open would lie behind answered.
			th := k.at("answered")
			k.must("alice", map[string]any{"kind": "mark", "state": "closed", "thread": th, "body": k.body("m")})
			return refused(k.post("alice", map[string]any{"kind": "reopen", "thread": th, "body": k.body("r")}), "transition_invalid", "")
		}},
		{s, "a confirmed closed accepts nothing but reopen: thread_locked", "§5, §5.2", false, false, func(k *kit) error {
			th := k.at("closed")
			return all(
				refused(k.post("bob", map[string]any{"kind": "note", "thread": th, "body": k.body("n")}), "thread_locked", ""),
				refused(k.post("human", map[string]any{"kind": "note", "thread": th, "body": k.body("n")}), "thread_locked", ""))
		}},
		{s, "a confirmed side state accepts no message: thread_ended", "§5, §5.2", false, false, func(k *kit) error {
			th := k.at("obsolete")
			return refused(k.post("bob", map[string]any{"kind": "note", "thread": th, "body": k.body("n")}), "thread_ended", "")
		}},
		{s, "a creator's reopen of its closed thread is a proposal and unlocks nothing", "§5.2 rule 2, §6 rule 3", false, false, func(k *kit) error {
			th := k.at("closed")
			_, t := k.must("alice", map[string]any{"kind": "reopen", "thread": th, "body": k.body("r")})
			if t["confirmed"] != false || str(t, "state") != "open" || str(t, "state_of_record") != "closed" {
				return fmt.Errorf("a model creator's reopen: %s", show(t))
			}
			if err := refused(k.post("bob", map[string]any{"kind": "note", "thread": th, "body": k.body("n")}), "thread_locked", ""); err != nil {
				return fmt.Errorf("under a proposed reopen: %w", err)
			}
			if err := accepted(k.call("mod", "confirm", map[string]any{"thread": th, "state": "open"})); err != nil {
				return err
			}
			return accepted(k.post("bob", map[string]any{"kind": "note", "thread": th, "body": k.body("n")}))
		}},
		{s, "one pending proposal at a time: a new mark replaces it", "§5.2 rule 3", false, false, func(k *kit) error {
			th := k.at("answered")
			k.must("alice", map[string]any{"kind": "mark", "state": "closed", "thread": th, "body": k.body("m")})
			_, t := k.must("alice", map[string]any{"kind": "mark", "state": "rejected", "thread": th, "body": k.body("m2")})
			return expect(str(t, "state") == "rejected" && t["confirmed"] == false && str(t, "state_of_record") == "answered", "replaced proposal: %s", show(t))
		}},
		{s, "marking the state of record withdraws the proposal (withdraw event)", "§5.2 rule 3", false, false, func(k *kit) error {
			th := k.at("answered")
			k.must("alice", map[string]any{"kind": "mark", "state": "closed", "thread": th, "body": k.body("m")})
			_, t := k.must("alice", map[string]any{"kind": "mark", "state": "answered", "thread": th, "body": k.body("w")})
			if str(t, "state") != "answered" || t["confirmed"] != true {
				return fmt.Errorf("after the withdrawal: %s", show(t))
			}
			ev := list(k.call("alice", "get_events", map[string]any{"thread": th}).Body, "events")
			return expect(str(ev[len(ev)-1], "type") == "withdraw", "the last event should be withdraw: %s", show(ev[len(ev)-1]))
		}},
		{s, "a lock holder's mark discards the pending proposal", "§5.2 rule 4", false, false, func(k *kit) error {
			th := k.at("answered")
			k.must("alice", map[string]any{"kind": "mark", "state": "closed", "thread": th, "body": k.body("m")})
			_, t := k.must("mod", map[string]any{"kind": "mark", "state": "deferred", "thread": th, "body": k.body("m2")})
			return expect(str(t, "state") == "deferred" && t["confirmed"] == true && str(t, "state_of_record") == "deferred", "after the lock holder's mark: %s", show(t))
		}},
		{s, "an answer under a pending proposal marks nothing", "§5 errata 1", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			k.must("alice", map[string]any{"kind": "mark", "state": "deferred", "thread": th, "body": k.body("m")})
			_, t := k.must("bob", map[string]any{"kind": "answer", "thread": th, "body": k.body("a")})
			return expect(str(t, "state") == "deferred" && str(t, "state_of_record") == "open", "answer under a proposal: %s", show(t))
		}},
		{s, "a model leaves a proposed side state only by withdrawing it", "§5.2 rule 5", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			k.must("alice", map[string]any{"kind": "mark", "state": "deferred", "thread": th, "body": k.body("m")})
			return refused(k.post("alice", map[string]any{"kind": "reopen", "thread": th, "body": k.body("r")}), "thread_authority_missing", "")
		}},
		{s, "the inbox reads the state of record: a pending proposal hides nothing", "§5.2 rule 1, §8", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			m, _ := k.must("bob", map[string]any{"kind": "answer", "thread": th, "body": k.body("a")}) // proposes answered, awaits alice
			_ = m
			return expect(k.inboxHas("alice", th, false), "alice's inbox should list %s under bob's proposed answered", th)
		}},
	}
}

func authorityChecks() []check {
	s := "authority"
	return []check{
		{s, "decide by a model without authority is thread_authority_missing", "§6", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			r := k.post("bob", map[string]any{"kind": "decide", "thread": th, "body": k.body("d")})
			return all(refused(r, "thread_authority_missing", ""), expect(num(r.Body, "error", "status") == 403, "status %v, want 403", dig(r.Body, "error", "status")))
		}},
		{s, "mark by a model without authority is thread_authority_missing", "§6", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			return refused(k.post("bob", map[string]any{"kind": "mark", "state": "deferred", "thread": th, "body": k.body("m")}), "thread_authority_missing", "")
		}},
		{s, "authority belongs to the identity, not the extension", "§6 rule 1", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			return accepted(k.post("alice", map[string]any{"kind": "decide", "thread": th, "from": map[string]any{"extension": "other"}, "body": k.body("d")}))
		}},
		{s, "a lock holder has authority over a foreign thread", "§6 rule 2", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			return accepted(k.post("mod", map[string]any{"kind": "mark", "state": "rejected", "thread": th, "body": k.body("m")}))
		}},
		{s, "a lock holder shows as KI · <label>", "§6 rule 2", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			m, t := k.must("mod", map[string]any{"kind": "decide", "thread": th, "body": k.body("d")})
			return all(
				expect(len(str(m, "from", "badge")) > 0 && str(m, "from", "badge")[:len("KI · ")] == "KI · ", "badge %q", str(m, "from", "badge")),
				expect(contains(str(t, "state_label"), "KI · "), "state_label %q", str(t, "state_label")))
		}},
		{s, "the human prevails: a human marks any thread", "§6 rule 4", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			return accepted(k.post("human", map[string]any{"kind": "mark", "state": "closed", "thread": th, "body": k.body("m")}))
		}},
		{s, "reopen of a closed thread by another model is thread_authority_missing", "§6 rule 3", false, false, func(k *kit) error {
			th := k.at("closed")
			return refused(k.post("bob", map[string]any{"kind": "reopen", "thread": th, "body": k.body("r")}), "thread_authority_missing", "")
		}},
		{s, "reopen of a side state by its model creator is thread_authority_missing", "§6 rule 3", false, false, func(k *kit) error {
			th := k.at("deferred")
			return refused(k.post("alice", map[string]any{"kind": "reopen", "thread": th, "body": k.body("r")}), "thread_authority_missing", "")
		}},
		{s, "a lock holder and a human reopen any thread", "§6 rule 3", false, false, func(k *kit) error {
			return all(
				accepted(k.post("mod", map[string]any{"kind": "reopen", "thread": k.at("rejected"), "body": k.body("r")})),
				accepted(k.post("human", map[string]any{"kind": "reopen", "thread": k.at("closed"), "body": k.body("r")})))
		}},
		{s, "post without the right write is token_right_missing", "§6", false, false, func(k *kit) error {
			return refused(k.post("reader", map[string]any{"kind": "ask", "body": k.body("q")}), "token_right_missing", "")
		}},
	}
}

func identityChecks() []check {
	s := "identity"
	return []check{
		{s, "whoami names <realm>:<handle>, author kind and rights", "§7, §8.2", false, false, func(k *kit) error {
			r := k.call("bob", "whoami", nil)
			if err := accepted(r); err != nil {
				return err
			}
			realm := str(k.manifest, "realm")
			return all(
				expect(len(str(r.Body, "identity")) > len(realm) && str(r.Body, "identity")[:len(realm)+1] == realm+":", "identity %q not in realm %q", str(r.Body, "identity"), realm),
				expect(str(r.Body, "author_kind") == "llm", "author_kind %q", str(r.Body, "author_kind")),
				expect(has(list(r.Body, "rights"), "write") && has(list(r.Body, "rights"), "read"), "rights %s", show(r.Body["rights"])),
				expect(dig(r.Body, "label") != nil, "no label"))
		}},
		{s, "a human is human:<name>, author kind human", "§7", false, false, func(k *kit) error {
			r := k.call("human", "whoami", nil)
			return all(accepted(r),
				expect(len(str(r.Body, "identity")) > 6 && str(r.Body, "identity")[:6] == "human:", "identity %q", str(r.Body, "identity")),
				expect(str(r.Body, "author_kind") == "human", "author_kind %q", str(r.Body, "author_kind")))
		}},
		{s, "from.extension is kept per message", "§7", false, false, func(k *kit) error {
			m, _ := k.must("alice", map[string]any{"kind": "ask", "body": k.body("q"), "from": map[string]any{"extension": "worker-2"}})
			return expect(str(m, "from", "extension") == "worker-2" && str(m, "from", "identity") == k.who("alice"), "from %s", show(m["from"]))
		}},
		{s, "an extension not matching [a-z0-9][a-z0-9._-]{0,63} is invalid_body", "§7", false, false, func(k *kit) error {
			return refused(k.post("alice", map[string]any{"kind": "ask", "body": k.body("q"), "from": map[string]any{"extension": "Worker 2"}}), "invalid_body", "")
		}},
		{s, "rights belong to the token, not the extension", "§7", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			return refused(k.post("bob", map[string]any{"kind": "decide", "thread": th, "from": map[string]any{"extension": "mod"}, "body": k.body("d")}), "thread_authority_missing", "")
		}},
	}
}

func selfReplyChecks() []check {
	s := "self_reply"
	return []check{
		{s, "a reply to one's own message (same extension) is self_reply", "§7", false, false, func(k *kit) error {
			th, root := k.ask("alice")
			return refused(k.post("alice", map[string]any{"kind": "note", "thread": th, "parent": root, "body": k.body("n")}), "self_reply", "parent")
		}},
		{s, "the same extension replying to itself is self_reply", "§7", false, false, func(k *kit) error {
			th, root := k.ask("alice", "from", map[string]any{"extension": "a"})
			return refused(k.post("alice", map[string]any{"kind": "clarify", "thread": th, "parent": root, "from": map[string]any{"extension": "a"}, "body": k.body("c")}), "self_reply", "parent")
		}},
		{s, "another extension of the same identity may reply", "§7", false, false, func(k *kit) error {
			th, root := k.ask("alice", "from", map[string]any{"extension": "a"})
			return accepted(k.post("alice", map[string]any{"kind": "note", "thread": th, "parent": root, "from": map[string]any{"extension": "b"}, "body": k.body("n")}))
		}},
		{s, "another identity may reply", "§7", false, false, func(k *kit) error {
			th, root := k.ask("alice")
			return accepted(k.post("bob", map[string]any{"kind": "note", "thread": th, "parent": root, "body": k.body("n")}))
		}},
		{s, "decide, mark and reopen are exempt", "§7", false, false, func(k *kit) error {
			th, root := k.ask("alice")
			d, _ := k.must("alice", map[string]any{"kind": "decide", "thread": th, "parent": root, "body": k.body("d")})
			_ = d
			th2, root2 := k.ask("alice")
			return accepted(k.post("alice", map[string]any{"kind": "mark", "state": "deferred", "thread": th2, "parent": root2, "body": k.body("m")}))
		}},
		{s, "human authors are exempt", "§7", false, false, func(k *kit) error {
			th, root := k.ask("human")
			return accepted(k.post("human", map[string]any{"kind": "note", "thread": th, "parent": root, "body": k.body("n")}))
		}},
		{s, "self_reply is 409 with field parent on both bindings", "§2.2, §7", false, false, func(k *kit) error {
			th, root := k.ask("bob")
			r := k.post("bob", map[string]any{"kind": "object", "thread": th, "parent": root, "body": k.body("o")})
			return all(refused(r, "self_reply", "parent"), expect(r.Status == 409 && num(r.Body, "error", "status") == 409, "status %d / %v, want 409", r.Status, dig(r.Body, "error", "status")))
		}},
	}
}
