package main_test

import (
	"net/url"
	"syscall"
	"testing"
	"time"

	"parley/internal/testkit"
	"parley/models"
)

// frozenBound is how late a waiter on one server may hear of a post made
// through it while another server is frozen holding a write transaction
// open: the write idle limit (models.WriteIdleLimit, 3 s) plus a generous
// margin for a loaded machine. PostgreSQL's own 30 s limit, which bounded
// it before, fails it.
const frozenBound = 15 * time.Second

// TestFrozenPeer (issue 23 item 5) runs a load of posts through server A,
// stops A with SIGSTOP at a moment when one of its transactions holds a
// transaction id open (PostgreSQL says so: a backend of A idle in a
// transaction with an xid), and then posts through server B an ask to an
// identity whose waiting inbox is on B. The frozen transaction holds the
// log's horizon back; the waiter must still see the ask within
// frozenBound, and after A resumes, every post A acknowledged is stored.
func TestFrozenPeer(t *testing.T) {
	t.Parallel()
	db := postgresSchema(t)
	tokens := agentTokens(t, db, 10)
	load, waiterToken, posterToken := tokens[:8], tokens[8], tokens[9]
	const appName = "parley_frozen_peer"
	a := startServe(t, db+"&application_name="+appName, nil, "--posts-per-minute", "100000", "--requests-per-minute", "100000")
	b := startServe(t, db, nil)
	gdb, err := models.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := gdb.DB()
	defer sqlDB.Close()
	holding := func() bool {
		var n int64
		gdb.Raw(`SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = ? AND backend_xid IS NOT NULL
			AND state = 'idle in transaction'`, appName).Scan(&n)
		return n > 0
	}
	signal := func(s syscall.Signal) {
		if err := a.Cmd.Process.Signal(s); err != nil {
			t.Fatal(err)
		}
	}

	stop := make(chan struct{})
	var acks []ack
	done := make(chan struct{})
	go func() { acks, _ = posters(a, "through the frozen peer", load, 1000, 0, stop); close(done) }()
	t.Cleanup(func() { a.Cmd.Process.Signal(syscall.SIGCONT) })

	// Freeze A until it is caught holding a transaction id: most moments
	// under load are such, but a stop between two transactions proves
	// nothing, so it is let go and tried again.
	frozen := false
	for try := 0; try < 100 && !frozen; try++ {
		time.Sleep(20 * time.Millisecond)
		signal(syscall.SIGSTOP)
		for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline) && !frozen; {
			frozen = holding()
		}
		if !frozen {
			signal(syscall.SIGCONT)
		}
	}
	if !frozen {
		t.Fatalf("server A was never caught holding a write transaction open; its log:\n%s", a.Tail())
	}
	frozenAt := time.Now()

	waiter := &httpAgent{t: t, base: b.URL(""), token: waiterToken}
	poster := &httpAgent{t: t, base: b.URL(""), token: posterToken}
	cursor := testkit.Str(waiter.get("/api/v1/inbox", nil), "cursor")
	answer := waiter.async("/api/v1/inbox", url.Values{"since": {cursor}, "wait": {"30"}})
	start := time.Now()
	id := testkit.Str(poster.post("/api/v1/messages", map[string]any{"kind": "ask",
		"to": map[string]any{"identity": "ainotes:agent8"}, "body": "Can you take this while A is frozen?"}), "message", "id")
	box, at := answer()
	stillFrozen := holding()
	signal(syscall.SIGCONT)
	close(stop)
	<-done

	items, _ := testkit.Dig(box, "items").([]any)
	if len(items) != 1 || testkit.Str(box, "items", 0, "message", "id") != id || at.Sub(start) > frozenBound {
		t.Fatalf("with A frozen %v ago, the waiting inbox on B answered %v after %v; want the ask %s within %v",
			at.Sub(frozenAt).Round(time.Millisecond), box, at.Sub(start).Round(time.Millisecond), id, frozenBound)
	}
	t.Logf("A frozen holding a transaction open: the waiter on B woke %v after the post (A's transaction still open then: %v); %d posts acknowledged by A",
		at.Sub(start).Round(time.Millisecond), stillFrozen, len(acks))
	if len(acks) == 0 {
		t.Fatal("A acknowledged no post: the load never ran")
	}
	checkStored(t, db, b, waiterToken, acks)
}
