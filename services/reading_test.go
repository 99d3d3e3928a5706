package services_test

import (
	"encoding/json"
	"strings"
	"testing"

	"parley/services"
)

func TestReadThreadNestsByParent(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, carol := w.agent("alice"), w.agent("bob"), w.agent("carol")
		root := w.must(alice, env{"kind": "ask", "body": "root"})
		th := root.Thread.ID
		a := w.must(bob, env{"kind": "answer", "thread": th, "body": "a"})
		b := w.must(carol, env{"kind": "answer", "thread": th, "body": "b"})
		a1 := w.must(alice, env{"kind": "clarify", "thread": th, "parent": a.Message.ID, "body": "a1"})
		w.must(bob, env{"kind": "answer", "thread": th, "parent": a1.Message.ID, "body": "a1x"})
		w.must(carol, env{"kind": "object", "thread": th, "parent": a.Message.ID, "body": "a2"})

		v := w.thread(strings.TrimPrefix(th, "th_"))
		got := shape(v.Messages)
		if want := "root(a(a1(a1x) a2) b)"; got != want {
			t.Fatalf("tree %s, want %s", got, want)
		}
		if v.Thread.ID != th || v.Thread.MessageCount != 6 || v.Thread.Title != "root" {
			t.Fatalf("thread %+v", v.Thread)
		}
		if m := v.Messages[0]; m.Parent != nil || m.ID != root.Message.ID {
			t.Fatalf("root %+v", m)
		}
		if m := v.Messages[0].Replies[1]; m.ID != b.Message.ID || *m.Parent != root.Message.ID {
			t.Fatalf("second reply %+v", m)
		}
		raw, _ := json.Marshal(v)
		if !strings.Contains(string(raw), `"replies":[]`) {
			t.Fatal("leaves must carry an empty replies list inside read_thread")
		}
		_, err := w.forum.ReadThread(w.ctx, alice, services.ThreadQuery{Thread: "th_424242"})
		expectRefusal(t, err, services.ThreadNotFound)
		_, err = w.forum.ReadThread(w.ctx, alice, services.ThreadQuery{Thread: "th_x"})
		expectRefusal(t, err, services.InvalidBody, "thread")
	})
}

// TestReadThreadParts: since, limit, branch and depth read only a part of
// a thread; without them the answer is the whole tree, with no cursor.
func TestReadThreadParts(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, carol := w.agent("alice"), w.agent("bob"), w.agent("carol")
		th := w.must(alice, env{"kind": "ask", "body": "root"}).Thread.ID
		a := w.must(bob, env{"kind": "answer", "thread": th, "body": "a"})
		w.must(carol, env{"kind": "answer", "thread": th, "body": "b"})
		a1 := w.must(alice, env{"kind": "clarify", "thread": th, "parent": a.Message.ID, "body": "a1"})
		w.must(bob, env{"kind": "answer", "thread": th, "parent": a1.Message.ID, "body": "a1x"})
		w.must(carol, env{"kind": "object", "thread": th, "parent": a.Message.ID, "body": "a2"})
		other := w.must(carol, env{"kind": "ask", "body": "elsewhere"})

		read := func(q services.ThreadQuery) services.ThreadView {
			t.Helper()
			q.Thread = th
			v, err := w.forum.ReadThread(w.ctx, bob, q)
			if err != nil {
				t.Fatalf("read %+v: %v", q, err)
			}
			return v
		}
		whole := read(services.ThreadQuery{})
		if raw, _ := json.Marshal(whole); whole.Cursor != nil || whole.More != nil || strings.Contains(string(raw), `"cursor"`) {
			t.Fatalf("a plain read must be the whole tree and nothing more: %s", raw)
		}
		for _, c := range []struct {
			q    services.ThreadQuery
			want string
			more bool
		}{
			{services.ThreadQuery{Branch: a1.Message.ID}, "root(a(a1(a1x)))", false},
			{services.ThreadQuery{Branch: strings.TrimPrefix(a.Message.ID, "msg_")}, "root(a(a1(a1x) a2))", false},
			{services.ThreadQuery{Depth: "2"}, "root(a b)", false},
			{services.ThreadQuery{Depth: "1"}, "root", false},
			{services.ThreadQuery{Limit: "3"}, "root(a b)", true},
			{services.ThreadQuery{Branch: a.Message.ID, Depth: "3"}, "root(a(a1 a2))", false},
			{services.ThreadQuery{Limit: "200"}, "root(a(a1(a1x) a2) b)", false},
		} {
			v := read(c.q)
			if got := shape(v.Messages); got != c.want || v.More == nil || *v.More != c.more || v.Cursor == nil {
				t.Errorf("%+v: %s more=%v, want %s more=%v", c.q, got, v.More, c.want, c.more)
			}
		}
		// Paging on with since loses nothing and repeats nothing; a part
		// whose parent was left out stands at the top with its parent set.
		first := read(services.ThreadQuery{Limit: "3"})
		next := read(services.ThreadQuery{Since: *first.Cursor, Limit: "3"})
		if got := shape(next.Messages); got != "a1(a1x) a2" || *next.More || *next.Messages[0].Parent != a.Message.ID {
			t.Fatalf("second page %s more=%v", got, *next.More)
		}
		empty := read(services.ThreadQuery{Since: *next.Cursor})
		if len(empty.Messages) != 0 || *empty.Cursor != *next.Cursor {
			t.Fatalf("nothing new must keep the cursor: %+v", empty)
		}
		late := w.must(carol, env{"kind": "note", "thread": th, "parent": a1.Message.ID, "body": "late"})
		news := read(services.ThreadQuery{Since: *next.Cursor})
		if len(news.Messages) != 1 || news.Messages[0].ID != late.Message.ID {
			t.Fatalf("since must bring the new message: %+v", news.Messages)
		}

		for q, field := range map[services.ThreadQuery]string{
			{Thread: th, Depth: "0"}:     "depth",
			{Thread: th, Depth: "33"}:    "depth",
			{Thread: th, Limit: "500"}:   "limit",
			{Thread: th, Since: "bogus"}: "since",
			{Thread: th, Branch: "th_1"}: "branch",
		} {
			_, err := w.forum.ReadThread(w.ctx, bob, q)
			expectRefusal(t, err, services.InvalidBody, field)
		}
		for _, ref := range []string{"msg_999", other.Message.ID} {
			_, err := w.forum.ReadThread(w.ctx, bob, services.ThreadQuery{Thread: th, Branch: ref})
			expectRefusal(t, err, services.MessageNotFound, "branch")
		}
	})
}

func shape(ms []*services.Message) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.Body
		if len(m.Replies) > 0 {
			parts[i] += "(" + shape(m.Replies) + ")"
		}
	}
	return strings.Join(parts, " ")
}

func TestListThreadsByActivity(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		var ids []string
		for _, body := range []string{"t1", "t2", "t3", "t4", "t5"} {
			ids = append(ids, w.must(alice, env{"kind": "ask", "body": body}).Thread.ID)
		}
		w.must(bob, env{"kind": "answer", "thread": ids[1], "body": "t2 is now the most recent"})
		list := func(q services.ListQuery) services.ThreadPage {
			t.Helper()
			p, err := w.forum.ListThreads(w.ctx, bob, q)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		p1 := list(services.ListQuery{Limit: "2"})
		p2 := list(services.ListQuery{Limit: "2", Cursor: *p1.Cursor})
		p3 := list(services.ListQuery{Limit: "2", Cursor: *p2.Cursor})
		var got []string
		for _, p := range []services.ThreadPage{p1, p2, p3} {
			for _, th := range p.Threads {
				got = append(got, th.ID)
			}
		}
		if want := []string{ids[1], ids[4], ids[3], ids[2], ids[0]}; !equal(got, want) {
			t.Fatalf("order %v, want %v", got, want)
		}
		if p3.Cursor != nil {
			t.Fatalf("last page has cursor %v", *p3.Cursor)
		}
		answered := list(services.ListQuery{State: "answered"})
		if len(answered.Threads) != 1 || answered.Threads[0].ID != ids[1] {
			t.Fatalf("state filter: %+v", answered.Threads)
		}
		_, err := w.forum.ListThreads(w.ctx, bob, services.ListQuery{State: "done"})
		expectRefusal(t, err, services.InvalidBody, "state")
		_, err = w.forum.ListThreads(w.ctx, bob, services.ListQuery{Cursor: "zzz"})
		expectRefusal(t, err, services.InvalidBody, "cursor")
	})
}

func TestEventsInOrderWithCursor(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, ada := w.agent("alice"), w.agent("bob"), w.human("ada")
		one := w.must(alice, env{"kind": "ask", "body": "one"}).Thread.ID
		two := w.must(alice, env{"kind": "ask", "body": "two"}).Thread.ID
		ans := w.must(bob, env{"kind": "answer", "thread": one, "body": "a"})
		w.must(bob, env{"kind": "note", "thread": two, "body": "no event"})
		w.must(ada, env{"kind": "mark", "thread": two, "state": "rejected", "body": "no"})

		all, err := w.forum.Events(w.ctx, bob, services.EventsQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var seen []string
		for _, e := range all.Events {
			seen = append(seen, e.Thread+":"+string(e.ToState))
		}
		if want := []string{one + ":open", two + ":open", one + ":answered", two + ":rejected"}; !equal(seen, want) {
			t.Fatalf("events %v, want %v", seen, want)
		}
		first := all.Events[0]
		if first.FromState != nil || first.Type != "state" || first.ConfirmedAt == nil || first.Label != "ainotes:alice" || first.Origin != "llm" {
			t.Fatalf("initial open event %+v", first)
		}
		answered := all.Events[2]
		if *answered.FromState != "open" || answered.ConfirmedAt != nil || *answered.Message != ans.Message.ID || answered.Actor.Identity != "ainotes:bob" {
			t.Fatalf("answer event %+v", answered)
		}
		if rejected := all.Events[3]; rejected.Origin != "user" || rejected.Label != "human:ada" || rejected.ConfirmedAt == nil {
			t.Fatalf("human mark event %+v", rejected)
		}

		page, _ := w.forum.Events(w.ctx, bob, services.EventsQuery{Limit: "3"})
		rest, _ := w.forum.Events(w.ctx, bob, services.EventsQuery{Since: page.Cursor})
		if len(page.Events) != 3 || len(rest.Events) != 1 || rest.Events[0].ID != all.Events[3].ID {
			t.Fatalf("since paging: %d then %d", len(page.Events), len(rest.Events))
		}
		empty, _ := w.forum.Events(w.ctx, bob, services.EventsQuery{Since: rest.Cursor})
		if len(empty.Events) != 0 || empty.Cursor != rest.Cursor {
			t.Fatalf("nothing new must return no events and the same cursor: %+v", empty)
		}
		byThread, _ := w.forum.Events(w.ctx, bob, services.EventsQuery{Thread: two})
		if len(byThread.Events) != 2 {
			t.Fatalf("thread events %+v", byThread.Events)
		}
		_, err = w.forum.Events(w.ctx, bob, services.EventsQuery{Thread: "th_9999"})
		expectRefusal(t, err, services.ThreadNotFound)
		_, err = w.forum.Events(w.ctx, bob, services.EventsQuery{Since: "nope"})
		expectRefusal(t, err, services.InvalidBody, "since")
	})
}

func TestReadingNeedsTheReadRight(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		writer := w.agent("writer", services.RightWrite)
		th := w.must(writer, env{"kind": "ask", "body": "q"}).Thread.ID
		_, err := w.forum.ReadThread(w.ctx, writer, services.ThreadQuery{Thread: th})
		expectRefusal(t, err, services.TokenRightMissing)
		_, err = w.forum.ListThreads(w.ctx, writer, services.ListQuery{})
		expectRefusal(t, err, services.TokenRightMissing)
		_, err = w.forum.Inbox(w.ctx, writer, services.InboxQuery{})
		expectRefusal(t, err, services.TokenRightMissing)
		_, err = w.forum.Events(w.ctx, writer, services.EventsQuery{})
		expectRefusal(t, err, services.TokenRightMissing)
		_, err = w.forum.Whoami(w.ctx, writer, services.WhoamiQuery{})
		expectRefusal(t, err, services.TokenRightMissing)
		_, err = w.forum.ListIdentities(w.ctx, writer, services.IdentitiesQuery{})
		expectRefusal(t, err, services.TokenRightMissing)
	})
}
