package services_test

import (
	"slices"
	"testing"

	"parley/services"
)

// TestVisitsAndUnread: what others post after a human's visit is unread
// for that human, counted for a page of threads in one call; their own
// messages never are; a visit never moves back.
func TestVisitsAndUnread(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		ada, bob, cy := w.human("ada"), w.agent("bob"), w.agent("cy")
		one := w.must(cy, env{"kind": "ask", "body": "first thread"})
		two := w.must(ada, env{"kind": "ask", "body": "second thread"})
		th1, th2 := one.Thread.ID, two.Thread.ID
		unread := func() map[string]services.Unread {
			t.Helper()
			u, err := w.forum.UnreadIn(w.ctx, ada, []string{th1, th2})
			if err != nil {
				t.Fatal(err)
			}
			return u
		}
		// Never visited: cy's root is unread; ada's own thread is not.
		u := unread()
		if got := u[th1]; got.Count != 1 || got.Visited || got.First != one.Message.ID {
			t.Fatalf("before any visit: %+v", got)
		}
		if _, ok := u[th2]; ok {
			t.Fatalf("ada's own message counted as unread: %+v", u[th2])
		}

		before, err := w.forum.Visit(w.ctx, ada, th1, one.Message.ID)
		if err != nil || before != "" {
			t.Fatalf("first visit: %q %v", before, err)
		}
		if got := unread(); len(got) != 0 {
			t.Fatalf("after the visit: %+v", got)
		}

		r1 := w.must(bob, env{"kind": "note", "thread": th1, "body": "news one"})
		w.must(ada, env{"kind": "note", "thread": th1, "parent": r1.Message.ID, "body": "ada's own"})
		r3 := w.must(w.agent("dan"), env{"kind": "note", "thread": th1, "body": "news two"})
		w.must(bob, env{"kind": "note", "thread": th2, "body": "news in two"})
		u = unread()
		if got := u[th1]; got.Count != 2 || !got.Visited || got.First != r1.Message.ID {
			t.Fatalf("after others posted: %+v", got)
		}
		if got := u[th2]; got.Count != 1 || got.Visited {
			t.Fatalf("thread two: %+v", got)
		}

		// The page shows up to r3: the visit before was the root.
		before, err = w.forum.Visit(w.ctx, ada, th1, r3.Message.ID)
		if err != nil || before != one.Message.ID {
			t.Fatalf("second visit: %q %v", before, err)
		}
		// An older page (a stale tab) does not move the visit back.
		if before, err = w.forum.Visit(w.ctx, ada, th1, one.Message.ID); err != nil || before != r3.Message.ID {
			t.Fatalf("stale visit: %q %v", before, err)
		}
		if got := unread(); len(got) != 1 || got[th2].Count != 1 {
			t.Fatalf("after the second visit: %+v", got)
		}
		// Visits are per human: dee's view is untouched by ada's visits.
		if got, _ := w.forum.UnreadIn(w.ctx, w.auth(mustToken(w, "dee")), []string{th1}); got[th1].Count != 4 {
			t.Fatalf("another human's unread: %+v", got)
		}

		if _, err := w.forum.Visit(w.ctx, ada, th1, "nonsense"); err == nil {
			t.Fatal("a visit with no message key was accepted")
		}
		if _, err := w.forum.UnreadIn(w.ctx, ada, []string{"th_x"}); err == nil {
			t.Fatal("a bad thread key was accepted")
		}
	})
}

func mustToken(w *world, human string) string {
	w.t.Helper()
	if err := w.forum.AddUser(w.ctx, human, "correct horse battery"); err != nil {
		w.t.Fatal(err)
	}
	tok, err := w.forum.CreateToken(w.ctx, services.TokenRequest{Human: human})
	if err != nil {
		w.t.Fatal(err)
	}
	return tok.Secret
}

// TestAdmitted: the acts a form offers are those Post admits, by the state
// of record (docs/protocol.md §5, §5.2 rule 1).
func TestAdmitted(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		ada := w.human("ada")
		bob := w.agent("bob")
		all := []services.Kind{services.Ask, services.Answer, services.Note, services.Mark, services.Reopen}
		cases := []struct {
			record, proposal services.State
			who              services.Caller
			want             []services.Kind
		}{
			{"open", "open", ada, all},
			{"answered", "closed", ada, all}, // a proposed closed locks nothing
			{"closed", "closed", ada, []services.Kind{services.Reopen}},
			{"closed", "open", ada, []services.Kind{services.Mark, services.Reopen}}, // turn the reopen down
			{"deferred", "deferred", ada, []services.Kind{services.Mark, services.Reopen}},
			{"rejected", "rejected", bob, []services.Kind{services.Reopen}},
		}
		for _, c := range cases {
			p := w.must(bob, env{"kind": "ask", "body": "thread at " + string(c.record) + " " + string(c.proposal) + " " + c.who.Identity})
			w.setRecord(p.Thread.ID, c.record, c.proposal)
			th := w.thread(p.Thread.ID).Thread
			got := services.Admitted(th, c.who, all)
			if !slices.Equal(got, c.want) {
				t.Errorf("%s/%s for %s: admitted %v, want %v", c.record, c.proposal, c.who.Identity, got, c.want)
			}
			// And Post agrees for the kinds refused.
			for _, k := range all {
				if slices.Contains(got, k) || k == services.Reopen {
					continue
				}
				e := env{"kind": k, "thread": p.Thread.ID, "body": "try " + string(k)}
				if k == services.Mark {
					e["state"] = "closed"
				}
				if _, err := w.post(c.who, e); err == nil {
					t.Errorf("%s/%s: %s not offered but Post admitted it", c.record, c.proposal, k)
				}
			}
		}
	})
}
