package services_test

import (
	"testing"
	"time"

	"parley/services"
)

// TestGauges: the counts the metrics read from the database — posts by
// kind and author kind, claims by status, escalations ever, overdue asks
// (escalated, turn still open) — follow a conversation, on both
// databases.
func TestGauges(t *testing.T) {
	start := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
	clk := &clock{t: start}
	eachWorldWith(t, services.Config{Now: clk.now}, func(t *testing.T, w *world) {
		clk.t = start
		alice, bob, ada := w.agent("alice"), w.agent("bob"), w.human("ada")
		g, err := w.forum.Gauges(w.ctx)
		if err != nil || len(g.Posts) != 0 || len(g.Claims) != 0 || g.Escalations != 0 || g.Overdue != 0 {
			t.Fatalf("empty forum: %+v, %v", g, err)
		}
		early := w.must(alice, env{"kind": "ask", "body": "Who reviews #11?", "reply_by": start.Add(time.Hour).Format(time.RFC3339)}).Thread.ID
		w.must(alice, env{"kind": "ask", "body": "Who reviews #12?", "reply_by": start.Add(time.Hour).Format(time.RFC3339)})
		w.must(ada, env{"kind": "ask", "body": "Lunch?"})
		w.must(bob, env{"kind": "assert", "body": "The cache holds 10k entries."})
		clk.advance(2 * time.Hour)
		if n, err := w.forum.EscalateDue(w.ctx); err != nil || n != 2 {
			t.Fatalf("escalated %d, %v", n, err)
		}
		w.must(bob, env{"kind": "answer", "thread": early, "body": "I do."})

		g, err = w.forum.Gauges(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := map[[2]string]int64{{"ask", "llm"}: 2, {"ask", "human"}: 1, {"assert", "llm"}: 1, {"answer", "llm"}: 1}
		for k, n := range want {
			if g.Posts[k] != n {
				t.Errorf("posts %v = %d, want %d (all: %v)", k, g.Posts[k], n, g.Posts)
			}
		}
		if g.Claims["unverified"] != 1 || len(g.Claims) != 1 {
			t.Errorf("claims %v, want one unverified", g.Claims)
		}
		if g.Escalations != 2 || g.Overdue != 1 {
			t.Errorf("escalations %d, overdue %d; want 2 and 1", g.Escalations, g.Overdue)
		}
		if p := w.forum.PoolStats(); p.Max <= 0 {
			t.Errorf("pool stats %+v", p)
		}
	})
}
