package services_test

import (
	"testing"

	"parley/services"
)

func inboxThreads(t *testing.T, w *world, who services.Caller, q services.InboxQuery) ([]string, string) {
	t.Helper()
	in, err := w.forum.Inbox(w.ctx, who, q)
	if err != nil {
		t.Fatalf("inbox: %v", err)
	}
	ids := []string{}
	for _, item := range in.Items {
		if item.Message == nil || item.Message.Thread != item.Thread.ID {
			t.Fatalf("inbox item without its turn message: %+v", item)
		}
		ids = append(ids, item.Thread.ID)
	}
	if in.Cursor == "" {
		t.Fatal("inbox returned no cursor")
	}
	return ids, in.Cursor
}

func TestInbox(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, carol := w.agent("alice"), w.agent("bob"), w.agent("carol")
		ada := w.human("ada")

		open1 := w.must(alice, env{"kind": "ask", "body": "one"}).Thread.ID                                                     // anyone
		toBob := w.must(alice, env{"kind": "ask", "to": map[string]string{"identity": "ainotes:bob"}, "body": "two"}).Thread.ID // bob
		mine := w.must(bob, env{"kind": "ask", "body": "bob's own, no extension"}).Thread.ID
		mineW1 := w.must(bob, env{"kind": "ask", "from": map[string]string{"extension": "w1"}, "body": "bob/w1's own"}).Thread.ID
		toBobW2 := w.must(carol, env{"kind": "ask", "to": map[string]string{"identity": "ainotes:bob", "extension": "w2"}, "body": "for w2"}).Thread.ID
		toCarol := w.must(alice, env{"kind": "ask", "to": map[string]string{"identity": "ainotes:carol"}, "body": "not bob's"}).Thread.ID
		ended := w.must(alice, env{"kind": "ask", "body": "ended"}).Thread.ID
		w.must(ada, env{"kind": "mark", "thread": ended, "state": "obsolete", "body": "obsolete"})
		reopened := w.must(ada, env{"kind": "ask", "body": "will close"}).Thread.ID
		w.must(ada, env{"kind": "mark", "thread": reopened, "state": "closed", "body": "x"})

		got, _ := inboxThreads(t, w, bob, services.InboxQuery{})
		want := []string{open1, toBob, mineW1, toBobW2}
		if !equal(got, want) {
			t.Fatalf("bob without extension: %v, want %v (own unextended question %s hidden, terminal %s %s absent, %s not his)", got, want, mine, ended, reopened, toCarol)
		}
		got, _ = inboxThreads(t, w, bob, services.InboxQuery{Extension: "w1"})
		if want := []string{open1, toBob, mine}; !equal(got, want) {
			t.Fatalf("bob as w1: %v, want %v (own w1 question hidden, w2's turn hidden)", got, want)
		}
		got, _ = inboxThreads(t, w, bob, services.InboxQuery{Extension: "w2"})
		if want := []string{open1, toBob, mine, mineW1, toBobW2}; !equal(got, want) {
			t.Fatalf("bob as w2: %v, want %v", got, want)
		}

		// since: only what is new; the cursor marks the last item returned.
		first, cursor := inboxThreads(t, w, carol, services.InboxQuery{Limit: "2"})
		rest, cursor2 := inboxThreads(t, w, carol, services.InboxQuery{Since: cursor})
		all, _ := inboxThreads(t, w, carol, services.InboxQuery{})
		if !equal(append(first, rest...), all) || len(first) != 2 {
			t.Fatalf("paging %v + %v != %v", first, rest, all)
		}
		if again, _ := inboxThreads(t, w, carol, services.InboxQuery{Since: cursor2}); len(again) != 0 {
			t.Fatalf("nothing new, yet %v", again)
		}
		// A new turn in an old thread is new again.
		w.must(bob, env{"kind": "clarify", "thread": toCarol, "body": "carol, which?"})
		w.must(ada, env{"kind": "ask", "thread": open1, "body": "anyone, again?"})
		if fresh, _ := inboxThreads(t, w, carol, services.InboxQuery{Since: cursor2}); !equal(fresh, []string{open1}) {
			t.Fatalf("after new turns: %v, want [%s] (the clarify awaits alice, the new ask anyone)", fresh, open1)
		}

		for _, bad := range []services.InboxQuery{{Since: "garbage"}, {Since: "c1.!!"}, {Limit: "0"}, {Limit: "201"}, {Limit: "x"}, {Extension: "Bad"}} {
			_, err := w.forum.Inbox(w.ctx, bob, bad)
			var r *services.Refusal
			if !asRefusal(err, &r) || r.Reason != services.InvalidBody || r.Field == "" {
				t.Fatalf("inbox %+v: %v, want invalid_body with a field", bad, err)
			}
		}
	})
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
