package main

import "fmt"

func actChecks() []check {
	s := "acts"
	return []check{
		{s, "ask without thread opens a thread, open and confirmed, awaiting anyone", "§4, §5", false, false, func(k *kit) error {
			m, th := k.must("alice", map[string]any{"kind": "ask", "body": k.body("q")})
			return all(
				expect(str(th, "state") == "open" && th["confirmed"] == true && str(th, "state_of_record") == "open", "new thread: %s", show(th)),
				expect(awaits(m, "*") && awaits(th, "*"), "an ask without to awaits anyone: %s", show(th["awaiting"])),
				expect(str(th, "created_by", "identity") == k.who("alice"), "created_by: %s", show(th["created_by"])))
		}},
		{s, "ask with to awaits that identity", "§4", false, false, func(k *kit) error {
			_, th := k.must("alice", map[string]any{"kind": "ask", "body": k.body("q"), "to": map[string]any{"identity": k.who("bob")}})
			return expect(awaits(th, k.who("bob")), "awaiting %s, want %s", show(th["awaiting"]), k.who("bob"))
		}},
		{s, "a message never awaits its own author: ask to oneself awaits anyone", "§4 errata 1", false, false, func(k *kit) error {
			r := k.post("alice", map[string]any{"kind": "ask", "body": k.body("q"), "to": map[string]any{"identity": k.who("alice")}})
			if err := accepted(r); err != nil {
				return err
			}
			return expect(awaits(obj(r.Body, "thread"), "*"), "awaiting %s, want anyone", show(dig(r.Body, "thread", "awaiting")))
		}},
		{s, "answer marks answered and awaits the asker", "§4", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			_, t := k.must("bob", map[string]any{"kind": "answer", "thread": th, "body": k.body("a")})
			return all(
				expect(str(t, "state") == "answered", "state %s, want answered", str(t, "state")),
				expect(awaits(t, k.who("alice")), "awaiting %s, want the asker", show(t["awaiting"])))
		}},
		{s, "clarify awaits the parent's author", "§4", false, false, func(k *kit) error {
			th, root := k.ask("alice")
			_, t := k.must("bob", map[string]any{"kind": "clarify", "thread": th, "parent": root, "body": k.body("c")})
			return expect(awaits(t, k.who("alice")), "awaiting %s", show(t["awaiting"]))
		}},
		{s, "object awaits the parent's author", "§4", false, false, func(k *kit) error {
			th, root := k.ask("alice")
			_, t := k.must("bob", map[string]any{"kind": "object", "thread": th, "parent": root, "body": k.body("o")})
			return expect(awaits(t, k.who("alice")), "awaiting %s", show(t["awaiting"]))
		}},
		{s, "propose awaits the thread's creator", "§4", false, false, func(k *kit) error {
			th, root := k.ask("alice")
			m, _ := k.must("bob", map[string]any{"kind": "answer", "thread": th, "parent": root, "body": k.body("a")})
			_, t := k.must("carol", map[string]any{"kind": "propose", "thread": th, "parent": str(m, "id"), "body": k.body("p")})
			return expect(awaits(t, k.who("alice")), "awaiting %s", show(t["awaiting"]))
		}},
		{s, "note carries the thread's awaiting forward", "§4", false, false, func(k *kit) error {
			th, root := k.ask("alice")
			k.must("bob", map[string]any{"kind": "clarify", "thread": th, "parent": root, "body": k.body("c")})
			_, t := k.must("carol", map[string]any{"kind": "note", "thread": th, "parent": root, "body": k.body("n")})
			return expect(awaits(t, k.who("alice")), "awaiting %s, want unchanged (alice)", show(t["awaiting"]))
		}},
		{s, "decide sets decided and awaits nobody", "§4", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			_, t := k.must("mod", map[string]any{"kind": "decide", "thread": th, "body": k.body("d")})
			return all(
				expect(str(t, "state") == "decided", "state %s", str(t, "state")),
				expect(t["awaiting"] == nil, "awaiting %s, want null", show(t["awaiting"])))
		}},
		{s, "mark sets its state and awaits nobody", "§4", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			_, t := k.must("mod", map[string]any{"kind": "mark", "state": "deferred", "thread": th, "body": k.body("m")})
			return all(
				expect(str(t, "state") == "deferred", "state %s", str(t, "state")),
				expect(t["awaiting"] == nil, "awaiting %s, want null", show(t["awaiting"])))
		}},
		{s, "reopen sets open and awaits anyone", "§4", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			k.must("mod", map[string]any{"kind": "mark", "state": "deferred", "thread": th, "body": k.body("m")})
			_, t := k.must("mod", map[string]any{"kind": "reopen", "thread": th, "body": k.body("r")})
			return all(
				expect(str(t, "state") == "open", "state %s", str(t, "state")),
				expect(awaits(t, "*"), "awaiting %s, want anyone", show(t["awaiting"])))
		}},
		{s, "an answer never answers the answerer's own question", "§4 errata 2", false, false, func(k *kit) error {
			th, root := k.ask("alice")
			_, t := k.must("alice", map[string]any{"kind": "answer", "thread": th, "parent": root, "from": map[string]any{"extension": "w2"}, "body": k.body("a")})
			return expect(str(t, "state") == "open", "an own answer marked %s, want the thread still open", str(t, "state"))
		}},
		{s, "after a clarify round the answer answers the ask", "§4 errata 1", false, false, func(k *kit) error {
			th, root := k.ask("alice")
			c, _ := k.must("bob", map[string]any{"kind": "clarify", "thread": th, "parent": root, "body": k.body("c")})
			a, t := k.must("alice", map[string]any{"kind": "answer", "thread": th, "parent": str(c, "id"), "body": k.body("a")})
			if !awaits(t, k.who("bob")) || str(t, "state") != "open" {
				return fmt.Errorf("alice's answer to the clarify: state %s awaiting %s, want open awaiting bob", str(t, "state"), show(t["awaiting"]))
			}
			_, t = k.must("bob", map[string]any{"kind": "answer", "thread": th, "parent": str(a, "id"), "body": k.body("a2")})
			return expect(str(t, "state") == "answered" && awaits(t, k.who("alice")), "bob's answer: state %s awaiting %s, want answered awaiting alice", str(t, "state"), show(t["awaiting"]))
		}},
		{s, "a turn can always be taken: the awaited party's answer is accepted", "§4 errata 1", false, false, func(k *kit) error {
			th, root := k.ask("alice", "to", map[string]any{"identity": k.who("bob")})
			return accepted(k.post("bob", map[string]any{"kind": "answer", "thread": th, "parent": root, "body": k.body("a")}))
		}},
	}
}
