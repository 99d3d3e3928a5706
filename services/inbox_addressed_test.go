package services_test

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"parley/services"
)

// drown posts n asks to anyone, from who, each a thread of its own.
var drowned atomic.Int64

func drown(w *world, who services.Caller, n int) {
	w.t.Helper()
	for range n {
		// Numbered across calls: one party's words repeated across threads
		// are refused (§14 rule 1, errata 2).
		w.must(who, env{"kind": "ask", "body": fmt.Sprintf("Open question %d, for anyone?", drowned.Add(1))})
	}
}

// TestAddressedInbox is the case errata 2 fixes (docs/protocol.md §8): 120
// open asks to anyone from another token pushed alice's only addressed turn
// to item 121 of her inbox, beyond the first page of 50. With
// addressed=true it comes first, alone; the view pages with its own
// cursor, and a cursor of either view is invalid_body in the other.
func TestAddressedInbox(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, carol, ada := w.agent("alice"), w.agent("bob"), w.agent("carol"), w.human("ada")
		drown(w, bob, 120)
		toAlice := w.must(carol, env{"kind": "ask", "to": map[string]string{"identity": "ainotes:alice"}, "body": "Alice, is the key rotated?"})

		full, _ := inboxThreads(t, w, alice, services.InboxQuery{})
		if len(full) != 50 || slices.Contains(full, toAlice.Thread.ID) {
			t.Fatalf("the full inbox's first page: %d items, alice's turn among them: the drowning case does not hold", len(full))
		}
		got, cursor := inboxThreads(t, w, alice, services.InboxQuery{Addressed: "true"})
		if !equal(got, []string{toAlice.Thread.ID}) {
			t.Fatalf("addressed inbox %v, want only [%s]", got, toAlice.Thread.ID)
		}
		if again, same := inboxThreads(t, w, alice, services.InboxQuery{Addressed: "true", Since: cursor}); len(again) != 0 || same != cursor {
			t.Fatalf("nothing new, yet %v (cursor %q, was %q)", again, same, cursor)
		}

		// Paging: more asks to anyone between asks to alice (one to her
		// extension w1, one she asked herself, one to carol); the addressed
		// view pages its own turns only, oldest first.
		drown(w, carol, 30)
		toAliceW1 := w.must(bob, env{"kind": "ask", "to": map[string]string{"identity": "ainotes:alice", "extension": "w1"}, "body": "Alice/w1, the logs?"})
		w.must(alice, env{"kind": "ask", "body": "My own question, to anyone."})
		w.must(bob, env{"kind": "ask", "to": map[string]string{"identity": "ainotes:carol"}, "body": "Carol only."})
		drown(w, carol, 1)
		toAlice2 := w.must(bob, env{"kind": "ask", "to": map[string]string{"identity": "ainotes:alice"}, "body": "Alice, one more?"})
		ended := w.must(carol, env{"kind": "ask", "to": map[string]string{"identity": "ainotes:alice"}, "body": "Moot soon."})
		w.must(ada, env{"kind": "mark", "thread": ended.Thread.ID, "state": "obsolete", "body": "Moot."})

		want := []string{toAlice.Thread.ID, toAliceW1.Thread.ID, toAlice2.Thread.ID}
		var paged []string
		since := ""
		for range 5 {
			page, next := inboxThreads(t, w, alice, services.InboxQuery{Addressed: "true", Since: since, Limit: "1"})
			if len(page) == 0 {
				if next != since {
					t.Fatalf("an empty page moved the cursor from %q to %q", since, next)
				}
				break
			}
			paged, since = append(paged, page...), next
		}
		if !equal(paged, want) {
			t.Fatalf("addressed pages %v, want %v", paged, want)
		}
		// From extension w2, the turn for w1 is not alice's (as in the full
		// inbox); from w1 it is.
		if got, _ := inboxThreads(t, w, alice, services.InboxQuery{Addressed: "true", Extension: "w2"}); !equal(got, []string{toAlice.Thread.ID, toAlice2.Thread.ID}) {
			t.Fatalf("addressed inbox of alice/w2: %v", got)
		}
		if got, _ := inboxThreads(t, w, alice, services.InboxQuery{Addressed: "true", Extension: "w1"}); !equal(got, want) {
			t.Fatalf("addressed inbox of alice/w1: %v", got)
		}
		// Every addressed turn is in the full view too.
		all, end := inboxThreads(t, w, alice, services.InboxQuery{Limit: "200"})
		for _, th := range want {
			if !slices.Contains(all, th) {
				t.Fatalf("%s is addressed to alice but not in her full inbox", th)
			}
		}

		// A cursor of one view is invalid_body in the other, and says so.
		_, fullCursor := inboxThreads(t, w, alice, services.InboxQuery{})
		for _, c := range []struct {
			q    services.InboxQuery
			word string
		}{
			{services.InboxQuery{Since: cursor}, "addressed"},
			{services.InboxQuery{Since: cursor, Addressed: "false"}, "addressed"},
			{services.InboxQuery{Since: fullCursor, Addressed: "true"}, "full inbox"},
		} {
			_, err := w.forum.Inbox(w.ctx, alice, c.q)
			r := expectRefusal(t, err, services.InvalidBody, "since")
			if !strings.Contains(r.Message, c.word) {
				t.Fatalf("inbox %+v: refusal %q does not name the view (%q)", c.q, r.Message, c.word)
			}
		}
		// get_events, the stream's log cursors: an addressed cursor is not theirs.
		_, err := w.forum.Events(w.ctx, alice, services.EventsQuery{Since: cursor})
		if r := expectRefusal(t, err, services.InvalidBody, "since"); !strings.Contains(r.Message, "addressed") {
			t.Fatalf("events with an addressed cursor: %q", r.Message)
		}
		for _, bad := range []services.InboxQuery{{Addressed: "yes"}, {Addressed: "1"}, {Addressed: "TRUE"}} {
			_, err := w.forum.Inbox(w.ctx, alice, bad)
			expectRefusal(t, err, services.InvalidBody, "addressed")
		}
		if got, _ := inboxThreads(t, w, alice, services.InboxQuery{Addressed: "false", Since: end}); len(got) != 0 {
			t.Fatalf("addressed=false is the full inbox, yet %v after its last cursor", got)
		}
	})
}

// TestAddressedInboxEscalations: for a human and a lock holder the
// addressed view holds the escalated threads whoever they await (§8,
// §14 rule 4); for a model that neither moderates nor is awaited it does
// not, and the escalation of an ask to anyone is not addressed to it.
func TestAddressedInboxEscalations(t *testing.T) {
	start := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
	clk := &clock{t: start}
	eachWorldWith(t, services.Config{Now: clk.now}, func(t *testing.T, w *world) {
		clk.t = start
		alice, bob, carol, ada := w.agent("alice"), w.agent("bob"), w.agent("carol"), w.human("ada")
		mod := w.agent("mod", services.RightRead, services.RightWrite, services.RightLock)
		drown(w, carol, 60)
		due := start.Add(time.Hour).Format(time.RFC3339)
		toBob := w.must(alice, env{"kind": "ask", "to": map[string]any{"identity": "ainotes:bob"}, "body": "Bob, is the mirror in sync?", "reply_by": due})
		open := w.must(alice, env{"kind": "ask", "body": "Anyone: is the backup done?", "reply_by": due})
		for _, who := range []services.Caller{ada, mod, carol} {
			if got, _ := inboxThreads(t, w, who, services.InboxQuery{Addressed: "true"}); len(got) != 0 {
				t.Fatalf("%s's addressed inbox before the deadline: %v", who.Identity, got)
			}
		}
		clk.advance(time.Hour)
		both := []string{toBob.Thread.ID, open.Thread.ID}
		for _, who := range []services.Caller{ada, mod} {
			if got, _ := inboxThreads(t, w, who, services.InboxQuery{Addressed: "true"}); !equal(got, both) {
				t.Fatalf("%s's addressed inbox after the deadline: %v, want the escalated %v", who.Identity, got, both)
			}
		}
		if got, _ := inboxThreads(t, w, bob, services.InboxQuery{Addressed: "true"}); !equal(got, []string{toBob.Thread.ID}) {
			t.Fatalf("bob's addressed inbox: %v, want his own turn only", got)
		}
		if got, _ := inboxThreads(t, w, carol, services.InboxQuery{Addressed: "true"}); len(got) != 0 {
			t.Fatalf("carol neither moderates nor is awaited, yet her addressed inbox holds %v", got)
		}
		if got, _ := inboxThreads(t, w, alice, services.InboxQuery{Addressed: "true"}); len(got) != 0 {
			t.Fatalf("the asker's addressed inbox holds her own overdue asks: %v", got)
		}
	})
}

// TestWaitingAddressedInbox: a waiting addressed inbox is not answered by a
// turn awaiting anyone — the call goes on waiting, and answers empty with
// the same cursor when its wait is up — but is by a turn addressed to the
// caller, with that turn only (docs/protocol.md §8, §13).
func TestWaitingAddressedInbox(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		box, err := w.forum.Inbox(w.ctx, alice, services.InboxQuery{Addressed: "true"})
		if err != nil {
			t.Fatal(err)
		}
		got := waitInbox(w.forum, alice, services.InboxQuery{Addressed: "true", Since: box.Cursor, Wait: "1"})
		w.must(bob, env{"kind": "ask", "body": "Anyone?"})
		select {
		case b := <-got:
			if len(b.Items) != 0 || b.Cursor != box.Cursor {
				t.Fatalf("an ask to anyone answered alice's addressed wait: %+v", b)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the waiting call never returned")
		}

		got = waitInbox(w.forum, alice, services.InboxQuery{Addressed: "true", Since: box.Cursor, Wait: "20"})
		w.must(bob, env{"kind": "ask", "body": "Anyone, again?"})
		select {
		case b := <-got:
			t.Fatalf("an ask to anyone ended alice's addressed wait: %+v", b)
		case <-time.After(300 * time.Millisecond): // still waiting, as it should
		}
		p := w.must(bob, env{"kind": "ask", "to": map[string]string{"identity": "ainotes:alice"}, "body": "Alice?"})
		select {
		case b := <-got:
			if len(b.Items) != 1 || b.Items[0].Message.ID != p.Message.ID {
				t.Fatalf("alice's waiting addressed inbox answered %+v, want only %s", b, p.Message.ID)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("a turn for alice did not end her addressed wait")
		}
	})
}
