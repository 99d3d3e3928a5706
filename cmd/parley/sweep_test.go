package main_test

import (
	"net/http"
	"testing"
	"time"

	"parley/models"
)

// TestSweepMeetsDeadlinesNobodyReads: serve's sweep escalates an ask whose
// reply_by passes while nobody reads — at its deadline, which it learned
// of from the write that set it, not on a quarter-second poll (issue 31:
// an idle forum costs its database nothing) — on both databases. The test
// watches the database itself: a read through the API would escalate by
// itself and hide a sweep that never came.
func TestSweepMeetsDeadlinesNobodyReads(t *testing.T) {
	eachDB(t, func(t *testing.T, db string) {
		tokens := agentTokens(t, db, 1)
		p := startServe(t, db, nil)
		gdb, err := models.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		if sqlDB, err := gdb.DB(); err == nil {
			t.Cleanup(func() { sqlDB.Close() })
		}
		escalations := func() int64 {
			var n int64
			if err := gdb.Table("events").Where("type = ?", "escalate").Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		// The server has been idle since it started: the sweep sleeps with
		// no deadline in sight. This ask's write wakes it to plan one.
		due := time.Now().Add(1500 * time.Millisecond).UTC()
		status, out, err := call(http.DefaultClient, "POST", p.URL("/api/v1/messages"), tokens[0], map[string]any{
			"parley": "1", "kind": "ask", "body": "Who owns the release checklist?", "reply_by": due.Format(time.RFC3339Nano),
		})
		if err != nil || status != http.StatusCreated {
			t.Fatalf("ask: %d %v %v", status, out, err)
		}
		if n := escalations(); n != 0 {
			t.Fatalf("%d escalations before the deadline", n)
		}
		deadline := time.Now().Add(30 * time.Second)
		for escalations() == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("no escalation 30 s after a deadline of %s nobody read\n%s", due.Format(time.RFC3339Nano), p.Tail())
			}
			time.Sleep(20 * time.Millisecond)
		}
		var ev models.Event
		if err := gdb.Where("type = ?", "escalate").Take(&ev).Error; err != nil {
			t.Fatal(err)
		}
		if ev.At.Before(due) {
			t.Fatalf("escalated at %s, before its deadline %s", ev.At, due)
		}
		t.Logf("escalated %s after its deadline", ev.At.Sub(due))
	})
}
