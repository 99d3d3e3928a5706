package main_test

import (
	"crypto/rand"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/internal/testkit"
	"parley/migrations/dbtest"
	"parley/models"
)

// freshDatabase makes a database of its own on the test server and
// returns its direct URL: a pooler passes no search_path, so the tests
// through PgBouncer cannot use a schema of their own.
func freshDatabase(t *testing.T) string {
	t.Helper()
	base := dbtest.PostgresURL(t)
	admin, err := models.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := admin.DB()
	name := "pgb_" + strings.ToLower(rand.Text())
	if err := admin.Exec("CREATE DATABASE " + name).Error; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE " + name + " WITH (FORCE)")
		sqlDB.Close()
	})
	u, _ := url.Parse(base)
	u.Path = "/" + name
	return u.String()
}

// readyz is the server's /readyz answer.
func readyz(p *testkit.Proc) string {
	resp, err := http.Get(p.URL("/readyz"))
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return string(raw)
}

// eventually polls cond for a minute.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for give := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(give) {
			t.Fatalf("after a minute, still not: %s", what)
		}
	}
}

// wakeups has the waiter (an agentN token) wait on its inbox through
// one server while the poster asks it through another, trials times, and
// returns how long each waiter took after the post; a wait that misses the
// ask fails the test.
func wakeups(t *testing.T, waiter, poster *httpAgent, identity string, trials int) []time.Duration {
	t.Helper()
	var took []time.Duration
	for trial := range trials {
		cursor := testkit.Str(waiter.get("/api/v1/inbox", nil), "cursor")
		answer := waiter.async("/api/v1/inbox", url.Values{"since": {cursor}, "wait": {"20"}})
		time.Sleep(50 * time.Millisecond) // let it wait (not a condition of the outcome)
		start := time.Now()
		id := testkit.Str(poster.post("/api/v1/messages", map[string]any{"kind": "ask",
			"to": map[string]any{"identity": identity}, "body": fmt.Sprintf("Trial %d: yours?", trial)}), "message", "id")
		box, at := answer()
		if testkit.Str(box, "items", 0, "message", "id") != id {
			t.Fatalf("trial %d: the waiting inbox answered %v, want the ask %s", trial, box, id)
		}
		took = append(took, at.Sub(start))
	}
	slices.Sort(took)
	return took
}

// wakeBound is how late a woken waiter may be in these tests: generous
// for a loaded machine, and below the 5 s backstop that a LISTEN lost
// without a word falls back to (over several trials, a backstop's wake-ups
// cannot all fall below it).
const wakeBound = 3 * time.Second

// TestThroughPgBouncer (issue 24 item 1) runs Parley through a real
// PgBouncer in transaction mode: migrate and token create through it (the
// first refused a startup parameter, the second said "no schema"), the
// session settings in force in its transactions, describe_exec refused,
// two servers through it — A with --db-listen-url direct, B without, whose
// listener hears nothing: B says so in its log and /readyz within
// seconds, and polls — waiters on each woken by posts on the other well
// before the 5 s backstop, and a load of posts through both with no
// failure and nothing lost.
func TestThroughPgBouncer(t *testing.T) {
	t.Parallel()
	direct := freshDatabase(t)
	pgb := testkit.StartPgBouncer(t, direct)
	pooled := pgb.URL(direct)

	ok(t, parley(t, nil, "", "migrate", "--db", pooled))
	fails(t, parley(t, nil, "", "migrate", "--db", pooled, "--db-exec-mode", "describe_exec"), 2, "describe_exec")
	fails(t, parley(t, nil, "", "migrate", "--db", pooled+"&default_query_exec_mode=describe_exec"), 1, "describe_exec")
	var tokens []string
	for i := range 6 {
		r := ok(t, parley(t, nil, "", "token", "create", "--handle", fmt.Sprintf("agent%d", i), "--rights", "read,write", "--db", pooled))
		tokens = append(tokens, lastLine(r.Stdout))
	}

	gdb, err := models.Open(pooled)
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := gdb.DB()
	defer sqlDB.Close()
	if info := models.Info(sqlDB); !info.Pooled || info.ExecMode != "cache_describe" {
		t.Fatalf("through PgBouncer: %+v, want pooled, cache_describe", info)
	}
	for _, readOnly := range []bool{false, true} {
		var got [3]string
		err := gdb.Transaction(func(tx *gorm.DB) error {
			tx.Raw("SHOW statement_timeout").Scan(&got[0])
			tx.Raw("SHOW lock_timeout").Scan(&got[1])
			return tx.Raw("SHOW idle_in_transaction_session_timeout").Scan(&got[2]).Error
		}, &sql.TxOptions{ReadOnly: readOnly})
		want := [3]string{"5s", "2s", "3s"}
		if readOnly {
			want[2] = "30s"
		}
		if err != nil || got != want {
			t.Fatalf("through PgBouncer, a transaction (read only %v) runs with %v (%v), want %v", readOnly, got, err, want)
		}
	}

	limits := []string{"--posts-per-minute", "100000", "--requests-per-minute", "100000"}
	a := startServe(t, pooled, nil, append(limits, "--db-listen-url", direct)...)
	b := startServe(t, pooled, nil, limits...)
	eventually(t, "B logs that its LISTEN hears nothing", func() bool {
		return strings.Contains(b.Stderr.String(), "level=ERROR") && strings.Contains(b.Stderr.String(), "--db-listen-url")
	})
	eventually(t, "B's /readyz says degraded", func() bool { return strings.HasPrefix(readyz(b), "degraded: ") })
	eventually(t, "A's /readyz says ready", func() bool { return readyz(a) == "ready" })

	onA := wakeups(t, &httpAgent{t: t, base: a.URL(""), token: tokens[0]}, &httpAgent{t: t, base: b.URL(""), token: tokens[1]}, "ainotes:agent0", 10)
	onB := wakeups(t, &httpAgent{t: t, base: b.URL(""), token: tokens[2]}, &httpAgent{t: t, base: a.URL(""), token: tokens[3]}, "ainotes:agent2", 5)
	t.Logf("through PgBouncer, a waiter on A (LISTEN direct) woken by a post on B: median %v, max %v; on B (LISTEN deaf, polling): median %v, max %v",
		onA[len(onA)/2], onA[len(onA)-1], onB[len(onB)/2], onB[len(onB)-1])
	if onA[len(onA)-1] > wakeBound || onB[len(onB)-1] > wakeBound {
		t.Fatalf("a waiter woke late: on A %v, on B %v; want every one within %v", onA, onB, wakeBound)
	}

	stop := make(chan struct{})
	type run struct {
		acks   []ack
		failed int
	}
	runs := make(chan run, 2)
	for i, p := range []*testkit.Proc{a, b} {
		go func() {
			acks, failed := posters(p, fmt.Sprintf("through server %d", i), tokens[3*i:3*i+3], 30, 0, stop)
			runs <- run{acks, failed}
		}()
	}
	var acks []ack
	for range 2 {
		r := <-runs
		if r.failed != 0 {
			t.Fatalf("%d posts through PgBouncer failed:\n%s\n%s", r.failed, a.Tail(), b.Tail())
		}
		acks = append(acks, r.acks...)
	}
	checkStored(t, pooled, a, tokens[0], acks)
}

// TestPgBouncerCost measures, in one run, the posts per second of one
// server direct (cache_statement) and through PgBouncer in transaction
// mode, in each query mode that works there (the best of three rounds of
// 4 agents posting 60 times each), and logs their ratios. It
// asserts only that every post succeeds: the figures are for
// docs/operations.md.
func TestPgBouncerCost(t *testing.T) {
	if testing.Short() {
		t.Skip("a measurement")
	}
	direct := freshDatabase(t)
	pgb := testkit.StartPgBouncer(t, direct)
	pooled := pgb.URL(direct)
	ok(t, parley(t, nil, "", "migrate", "--db", direct))
	var tokens []string
	for i := range 4 {
		r := ok(t, parley(t, nil, "", "token", "create", "--handle", fmt.Sprintf("agent%d", i), "--rights", "read,write", "--db", direct))
		tokens = append(tokens, lastLine(r.Stdout))
	}
	limits := []string{"--posts-per-minute", "100000", "--requests-per-minute", "100000"}
	paths := []struct{ name, db, mode string }{
		{"direct, cache_statement", direct, "cache_statement"},
		{"PgBouncer, cache_describe", pooled, "cache_describe"},
		{"PgBouncer, exec", pooled, "exec"},
		{"PgBouncer, simple_protocol", pooled, "simple_protocol"},
	}
	// The best of three rounds, the paths in turn: other load on the
	// machine only slows a round, and no path always runs first.
	rate := map[string]float64{}
	for round := range 3 {
		for _, p := range paths {
			srv := startServe(t, p.db, nil, append(limits, "--db-exec-mode", p.mode)...)
			posters(srv, "warm-up", tokens, 5, 0, make(chan struct{}))
			start := time.Now()
			acks, failed := posters(srv, fmt.Sprintf("%s round %d", p.name, round), tokens, 60, 0, make(chan struct{}))
			took := time.Since(start)
			if failed != 0 {
				t.Fatalf("%s: %d posts failed:\n%s", p.name, failed, srv.Tail())
			}
			rate[p.name] = max(rate[p.name], float64(len(acks))/took.Seconds())
			srv.Kill()
		}
	}
	for _, p := range paths {
		t.Logf("%-28s %6.0f posts/s, %.2f of direct", p.name, rate[p.name], rate[p.name]/rate[paths[0].name])
	}
}
