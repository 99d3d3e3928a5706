package services_test

import (
	"testing"

	"parley/services"
)

// TestAwaitingPerAct walks the "sets awaiting to" column of docs/protocol.md §4.
func TestAwaitingPerAct(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, carol := w.agent("alice"), w.agent("bob"), w.agent("carol")
		mod := w.agent("mod", services.RightRead, services.RightWrite, services.RightLock)
		ada := w.human("ada")

		// alice (extension w1) asks; bob answers with a nested exchange.
		root := w.must(alice, env{"kind": "ask", "from": map[string]string{"extension": "w1"}, "body": "How to page?"})
		th := root.Thread.ID
		check := func(name string, p services.Posted, identity, ext string) {
			t.Helper()
			if !awaitingIs(p.Message.Awaiting, identity, ext) || !awaitingIs(p.Thread.Awaiting, identity, ext) {
				t.Errorf("%s: message awaits %s, thread %s; want %s/%s", name, str(p.Message.Awaiting), str(p.Thread.Awaiting), identity, ext)
			}
		}
		check("ask without to", root, "*", "")
		addressed := w.must(carol, env{"kind": "ask", "thread": th, "to": map[string]string{"identity": "ainotes:bob", "extension": "b2"}, "body": "bob?"})
		check("ask with to", addressed, "ainotes:bob", "b2")
		clar := w.must(bob, env{"kind": "clarify", "thread": th, "parent": addressed.Message.ID, "body": "which part?"})
		check("clarify", clar, "ainotes:carol", "")
		note := w.must(mod, env{"kind": "note", "thread": th, "parent": clar.Message.ID, "body": "fyi"})
		check("note carries awaiting forward", note, "ainotes:carol", "")
		// An answer answers the nearest ask or clarify at or above its
		// parent (errata 1): carol answering below bob's clarify awaits bob.
		ans := w.must(carol, env{"kind": "answer", "thread": th, "parent": note.Message.ID, "body": "the paging part"})
		check("answer to a clarify awaits the clarify's author", ans, "ainotes:bob", "")
		if ans.Thread.State != "open" {
			t.Errorf("answering a clarify marked the thread %s", ans.Thread.State)
		}
		// bob answering below his own clarify skips it (errata 2: an answer
		// never answers the answerer's own question) and answers the
		// question he was asked, carol's ask: it awaits carol and marks.
		self := w.must(bob, env{"kind": "answer", "thread": th, "parent": ans.Message.ID, "body": "cursors"})
		check("answer below one's own clarify answers the ask above it", self, "ainotes:carol", "")
		if self.Thread.State != "answered" || self.Thread.Confirmed {
			t.Errorf("answering carol's ask left the thread %s (confirmed %v)", self.Thread.State, self.Thread.Confirmed)
		}
		ans2 := w.must(bob, env{"kind": "answer", "thread": th, "body": "page by seq"})
		check("answer to the root", ans2, "ainotes:alice", "w1")
		obj := w.must(carol, env{"kind": "object", "thread": th, "parent": ans2.Message.ID, "body": "seq leaks"})
		check("object", obj, "ainotes:bob", "")
		prop := w.must(carol, env{"kind": "propose", "thread": th, "body": "use seq"})
		check("propose awaits the creator's identity", prop, "ainotes:alice", "")
		dec := w.must(alice, env{"kind": "decide", "thread": th, "body": "seq"})
		check("decide", dec, "", "")
		open := w.must(ada, env{"kind": "mark", "thread": th, "state": "open", "body": "again"})
		check("mark open", open, "*", "")
		shut := w.must(ada, env{"kind": "mark", "thread": th, "state": "deferred", "body": "later"})
		check("mark deferred", shut, "", "")
		re := w.must(mod, env{"kind": "reopen", "thread": th, "body": "now"})
		check("reopen", re, "*", "")
	})
}

func TestAnswerWithoutAnyAskAwaitsTheCreator(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		th := w.must(alice, env{"kind": "ask", "from": map[string]string{"extension": "lead"}, "body": "q"}).Thread.ID
		// Every path from an answer reaches the root ask, so the creator
		// fallback shows only through the root: the creator, with its extension.
		p := w.must(bob, env{"kind": "answer", "thread": th, "body": "a"})
		if !awaitingIs(p.Thread.Awaiting, "ainotes:alice", "lead") {
			t.Fatalf("awaiting %s", str(p.Thread.Awaiting))
		}
	})
}
