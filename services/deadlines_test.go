package services_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/models"
	"parley/services"
)

// TestReplyByIsChecked: reply_by is RFC 3339, in the future, at most
// reply_by_max_hours ahead, and only on ask (docs/protocol.md §14 rule 4).
func TestReplyByIsChecked(t *testing.T) {
	start := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
	clk := &clock{t: start}
	eachWorldWith(t, services.Config{Now: clk.now}, func(t *testing.T, w *world) {
		alice := w.agent("alice")
		at := func(d time.Duration) string { return start.Add(d).Format(time.RFC3339) }
		for name, e := range map[string]env{
			"in the past":       {"kind": "ask", "body": "x", "reply_by": at(-time.Second)},
			"now":               {"kind": "ask", "body": "x", "reply_by": at(0)},
			"beyond 168 hours":  {"kind": "ask", "body": "x", "reply_by": at(168*time.Hour + time.Second)},
			"not RFC 3339":      {"kind": "ask", "body": "x", "reply_by": "tomorrow noon"},
			"a number":          {"kind": "ask", "body": "x", "reply_by": 1893456000},
			"null":              {"kind": "ask", "body": "x", "reply_by": nil},
			"on a note":         {"kind": "note", "thread": "th_1", "body": "x", "reply_by": at(time.Hour)},
			"on an assert":      {"kind": "assert", "body": "x", "reply_by": at(time.Hour)},
			"on a mark as well": {"kind": "mark", "thread": "th_1", "state": "closed", "body": "x", "reply_by": at(time.Hour)},
		} {
			t.Run(name, func(t *testing.T) {
				w.refused(alice, e, services.InvalidBody, "reply_by")
			})
		}
		p := w.must(alice, env{"kind": "ask", "body": "Within the week?", "reply_by": "2030-03-08T11:00:00+02:00"})
		if p.Message.ReplyBy == nil || !p.Message.ReplyBy.Equal(start.Add(168*time.Hour)) || p.Message.ReplyBy.Location() != time.UTC {
			t.Fatalf("reply_by %v, want %v in UTC", p.Message.ReplyBy, start.Add(168*time.Hour))
		}
		if p.Thread.OverdueSince != nil {
			t.Fatalf("overdue before the deadline: %v", p.Thread.OverdueSince)
		}
	})
}

// TestDeadlineEscalates walks rule 4 with a controllable clock: an ask
// whose turn is still open at reply_by escalates — one escalate event,
// overdue_since set, in the inbox of every human and lock holder — and
// stops being overdue when the turn moves. A note does not move it.
func TestDeadlineEscalates(t *testing.T) {
	start := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
	clk := &clock{t: start}
	eachWorldWith(t, services.Config{Now: clk.now}, func(t *testing.T, w *world) {
		clk.t = start
		alice, bob, carol, ada := w.agent("alice"), w.agent("bob"), w.agent("carol"), w.human("ada")
		mod := w.agent("mod", services.RightRead, services.RightWrite, services.RightLock)
		deadline := start.Add(time.Hour)
		ask := w.must(alice, env{"kind": "ask", "to": map[string]any{"identity": "ainotes:bob"}, "body": "Is the mirror in sync?", "reply_by": deadline.Format(time.RFC3339)})
		th := ask.Thread.ID
		cursor := w.inbox(ada, "").Cursor

		clk.advance(59 * time.Minute)
		if n, err := w.forum.EscalateDue(w.ctx); err != nil || n != 0 {
			t.Fatalf("before the deadline: escalated %d, %v", n, err)
		}
		w.must(carol, env{"kind": "note", "thread": th, "body": "bob is on leave today."}) // carries the turn
		if got := w.inbox(ada, cursor); len(got.Items) != 0 {
			t.Fatalf("ada's inbox before the deadline: %+v", got.Items)
		}

		clk.advance(time.Minute)
		// A read sees it first: it escalates the thread, once.
		got := w.inbox(ada, cursor)
		if len(got.Items) != 1 || got.Items[0].Thread.ID != th || got.Items[0].Message.ID != ask.Message.ID {
			t.Fatalf("ada's inbox after the deadline: %+v", got.Items)
		}
		if since := got.Items[0].Thread.OverdueSince; since == nil || !since.Equal(deadline) {
			t.Fatalf("overdue_since %v, want %v", since, deadline)
		}
		for _, who := range []services.Caller{mod, bob} {
			if !inInbox(w.inbox(who, ""), th) {
				t.Fatalf("%s's inbox lacks the escalated thread", who.Identity)
			}
		}
		if inInbox(w.inbox(carol, ""), th) || inInbox(w.inbox(alice, ""), th) {
			t.Fatal("an escalated thread reached a model that neither moderates nor was awaited, or its asker")
		}
		if n, err := w.forum.EscalateDue(w.ctx); err != nil || n != 0 {
			t.Fatalf("second sweep escalated %d, %v", n, err)
		}
		w.thread(th)
		escalations := w.escalations(th)
		if len(escalations) != 1 {
			t.Fatalf("%d escalate events, want 1", len(escalations))
		}
		e := escalations[0]
		if *e.Message != ask.Message.ID || e.Actor.Identity != "ainotes:bob" || e.Origin != "guard" || e.Label != "guard" ||
			!e.At.Equal(deadline) || e.ToState != "open" || e.ConfirmedAt != nil {
			t.Fatalf("escalate event %+v", e)
		}

		// The turn moves: no longer overdue, out of ada's inbox.
		clk.advance(time.Minute)
		p := w.must(bob, env{"kind": "answer", "thread": th, "parent": ask.Message.ID, "body": "In sync since 09:40."})
		if p.Thread.OverdueSince != nil || inInbox(w.inbox(ada, ""), th) {
			t.Fatalf("after the answer: overdue_since %v", p.Thread.OverdueSince)
		}
		if len(w.escalations(th)) != 1 {
			t.Fatal("the log lost or doubled its escalation")
		}

		// An ask inside a thread can carry reply_by too; once its turn
		// moves before the deadline, nothing escalates.
		q := w.must(alice, env{"kind": "ask", "thread": th, "parent": p.Message.ID, "body": "And the backup?", "reply_by": clk.now().Add(time.Hour).Format(time.RFC3339)})
		w.must(bob, env{"kind": "answer", "thread": th, "parent": q.Message.ID, "body": "Ran at 03:00."})
		clk.advance(2 * time.Hour)
		if n, _ := w.forum.EscalateDue(w.ctx); n != 0 || w.thread(th).Thread.OverdueSince != nil {
			t.Fatalf("an answered ask escalated (%d)", n)
		}
	})
}

// TestSweepEscalatesWithoutReads: the periodic sweep alone records the
// escalation, at the time it runs; the Overdue page lists escalated threads
// oldest deadline first, with who failed to answer.
func TestSweepEscalatesWithoutReads(t *testing.T) {
	start := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
	clk := &clock{t: start}
	eachWorldWith(t, services.Config{Now: clk.now}, func(t *testing.T, w *world) {
		clk.t = start
		alice, bob, ada := w.agent("alice"), w.agent("bob"), w.human("ada")
		late := w.must(alice, env{"kind": "ask", "body": "Who reviews #12?", "reply_by": start.Add(2 * time.Hour).Format(time.RFC3339)}).Thread.ID
		early := w.must(alice, env{"kind": "ask", "to": map[string]any{"identity": "ainotes:bob"}, "body": "Who reviews #11?", "reply_by": start.Add(time.Hour).Format(time.RFC3339)}).Thread.ID
		w.must(alice, env{"kind": "ask", "body": "No deadline here."})

		clk.advance(3*time.Hour + 250*time.Millisecond)
		if n, err := w.forum.EscalateDue(w.ctx); err != nil || n != 2 {
			t.Fatalf("sweep escalated %d, %v; want 2", n, err)
		}
		for _, th := range []string{early, late} {
			e := w.escalations(th)
			if len(e) != 1 || !e[0].At.Equal(clk.now()) {
				t.Fatalf("%s: escalations %+v, want one at %v", th, e, clk.now())
			}
		}
		items, err := w.forum.Overdue(w.ctx, ada)
		if err != nil || len(items) != 2 || items[0].Thread.ID != early || items[1].Thread.ID != late {
			t.Fatalf("overdue page: %+v, %v", items, err)
		}
		if !awaitingIs(items[0].Awaited, "ainotes:bob", "") || !awaitingIs(items[1].Awaited, "*", "") || items[0].Ask.Body != "Who reviews #11?" {
			t.Fatalf("who failed to answer: %+v / %+v", items[0], items[1])
		}
		w.must(bob, env{"kind": "answer", "thread": early, "body": "I do."})
		if items, _ := w.forum.Overdue(w.ctx, ada); len(items) != 1 || items[0].Thread.ID != late {
			t.Fatalf("after an answer the overdue page shows %+v", items)
		}
	})
}

// TestLateAnswerRecordsTheEscalation: an answer that comes after reply_by,
// before any read or sweep saw the turn overdue, records the escalation
// first — the turn was open when the deadline passed — and then moves the
// turn. A note, which carries the turn, escalates nothing itself.
func TestLateAnswerRecordsTheEscalation(t *testing.T) {
	start := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
	clk := &clock{t: start}
	eachWorldWith(t, services.Config{Now: clk.now}, func(t *testing.T, w *world) {
		clk.t = start
		alice, bob, carol := w.agent("alice"), w.agent("bob"), w.agent("carol")
		ask := w.must(alice, env{"kind": "ask", "body": "Mirror in sync?", "reply_by": start.Add(time.Minute).Format(time.RFC3339)})
		th := ask.Thread.ID
		clk.advance(2 * time.Minute)
		w.must(carol, env{"kind": "note", "thread": th, "body": "Asking around."})
		var n int64
		w.db.Model(&models.Event{}).Where("type = ?", "escalate").Count(&n)
		if n != 0 {
			t.Fatalf("a note escalated the thread")
		}
		clk.advance(time.Second)
		p := w.must(bob, env{"kind": "answer", "thread": th, "body": "Yes, since 09:00."})
		if p.Thread.OverdueSince != nil {
			t.Fatalf("still overdue after the answer: %v", p.Thread.OverdueSince)
		}
		e := w.escalations(th)
		if len(e) != 1 || *e[0].Message != ask.Message.ID || !e[0].At.Equal(clk.now()) {
			t.Fatalf("escalations %+v", e)
		}
		reader := services.Caller{Identity: "test:reader", Kind: services.KindLLM, Rights: []services.Right{services.RightRead}}
		page, _ := w.forum.Events(w.ctx, reader, services.EventsQuery{Thread: th})
		types := []string{}
		for _, ev := range page.Events {
			types = append(types, string(ev.Type))
		}
		if !slices.Equal(types, []string{"state", "escalate", "state"}) {
			t.Fatalf("events %v: the escalation must come before the answer's mark", types)
		}
		if n, _ := w.forum.EscalateDue(w.ctx); n != 0 {
			t.Fatalf("escalated again: %d", n)
		}
	})
}

// TestEscalationIsRecordedOnce races sweeps and reads of several "servers"
// (Forums over the same database) at an overdue thread: one escalate event.
func TestEscalationIsRecordedOnce(t *testing.T) {
	start := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
	clk := &clock{t: start}
	eachWorldWith(t, services.Config{Now: clk.now}, func(t *testing.T, w *world) {
		clk.t = start
		alice, ada := w.agent("alice"), w.human("ada")
		var threads []string
		for i := range 5 {
			threads = append(threads, w.must(alice, env{"kind": "ask", "body": "Deadline " + string(rune('A'+i)), "reply_by": start.Add(time.Minute).Format(time.RFC3339)}).Thread.ID)
		}
		clk.advance(time.Hour)
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for i := range 12 {
			forum := services.New(w.db, services.Config{Now: clk.now}) // another server process
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				switch i % 3 {
				case 0:
					_, err = forum.EscalateDue(context.Background())
				case 1:
					_, err = forum.Inbox(context.Background(), ada, services.InboxQuery{})
				default:
					_, err = forum.ReadThread(context.Background(), ada, services.ThreadQuery{Thread: threads[i%len(threads)]})
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, th := range threads {
			if n := len(w.escalations(th)); n != 1 {
				t.Fatalf("%s: %d escalate events, want exactly 1", th, n)
			}
		}
		// The database itself refuses a second escalate event for an ask.
		var ev models.Event
		if err := w.db.Where("type = ?", "escalate").First(&ev).Error; err != nil {
			t.Fatal(err)
		}
		ev.ID, ev.Seq = 0, ev.Seq+1000
		if err := w.db.Create(&ev).Error; err == nil {
			t.Fatal("a second escalate event for the same ask was stored")
		}
	})
}

func (w *world) inbox(who services.Caller, since string) services.Inbox {
	w.t.Helper()
	in, err := w.forum.Inbox(w.ctx, who, services.InboxQuery{Since: since})
	if err != nil {
		w.t.Fatalf("inbox of %s: %v", who.Identity, err)
	}
	return in
}

func inInbox(in services.Inbox, thread string) bool {
	return slices.ContainsFunc(in.Items, func(i services.InboxItem) bool { return i.Thread.ID == thread })
}

// escalations are a thread's escalate events.
func (w *world) escalations(thread string) []services.Event {
	w.t.Helper()
	reader := services.Caller{Identity: "test:reader", Kind: services.KindLLM, Rights: []services.Right{services.RightRead}}
	page, err := w.forum.Events(w.ctx, reader, services.EventsQuery{Thread: thread, Limit: "200"})
	if err != nil {
		w.t.Fatal(err)
	}
	var out []services.Event
	for _, e := range page.Events {
		if e.Type == "escalate" {
			out = append(out, e)
		}
	}
	return out
}

// TestAdmittedReadEscalatesWhatIsDue: a request's admission reads the
// earliest pending deadline so that its read can skip the due-escalation
// query (dueProbe); a read whose clock has passed that deadline since its
// admission, and one admitted after it passed, still escalate before they
// read.
func TestAdmittedReadEscalatesWhatIsDue(t *testing.T) {
	start := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
	clk := &clock{t: start}
	eachWorldWith(t, services.Config{Now: clk.now}, func(t *testing.T, w *world) {
		clk.t = start
		tok, err := w.forum.CreateToken(w.ctx, services.TokenRequest{Handle: "ada", Rights: []services.Right{services.RightRead, services.RightWrite}})
		if err != nil {
			t.Fatal(err)
		}
		alice := w.agent("alice")
		// Counted in the table: reading the events through the services
		// would escalate what is due itself.
		stored := func(thread string) int {
			var n int64
			id, _ := strconv.ParseInt(strings.TrimPrefix(thread, "th_"), 10, 64)
			if err := w.db.Model(&models.Event{}).Where("thread_id = ? AND type = ?", id, "escalate").Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
		deadline := start.Add(time.Hour)
		first := w.must(alice, env{"kind": "ask", "body": "Is the mirror in sync?", "reply_by": deadline.Format(time.RFC3339)}).Thread.ID
		second := w.must(alice, env{"kind": "ask", "body": "And the backup?", "reply_by": deadline.Add(time.Hour).Format(time.RFC3339)}).Thread.ID

		// Admitted before the deadline, read after it.
		who, err := w.forum.Admit(w.ctx, tok.Secret, "read_thread")
		if err != nil {
			t.Fatal(err)
		}
		clk.advance(time.Hour)
		if _, err := w.forum.ReadThread(w.ctx, who, services.ThreadQuery{Thread: first}); err != nil {
			t.Fatal(err)
		}
		if n := stored(first); n != 1 {
			t.Fatalf("read past the deadline its admission saw: %d escalate events, want 1", n)
		}
		if n := stored(second); n != 0 {
			t.Fatalf("a turn escalated before its deadline: %d events", n)
		}

		// Admitted after the second deadline passed.
		clk.advance(time.Hour)
		who, err = w.forum.Admit(w.ctx, tok.Secret, "list_threads")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.forum.ListThreads(w.ctx, who, services.ListQuery{}); err != nil {
			t.Fatal(err)
		}
		if n := stored(second); n != 1 {
			t.Fatalf("read admitted past a deadline: %d escalate events, want 1", n)
		}
	})
}
