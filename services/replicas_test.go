package services_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/internal/testkit"
	"parley/migrations"
	"parley/models"
	"parley/services"
)

// replicated is a primary with a streaming standby (testkit), Parley's
// schema migrated on the primary and replayed on the standby.
func replicated(t *testing.T) (*testkit.Replicated, *gorm.DB, *gorm.DB) {
	t.Helper()
	rep := testkit.StartReplicated(t)
	open := func(standby bool) *gorm.DB {
		db, err := models.Open(rep.URL(standby, "postgres"))
		if err != nil {
			t.Fatal(err)
		}
		sqlDB, _ := db.DB()
		t.Cleanup(func() { sqlDB.Close() })
		return db
	}
	primary, standby := open(false), open(true)
	if _, err := migrations.Up(context.Background(), primary); err != nil {
		t.Fatal(err)
	}
	return rep, primary, standby
}

// within polls cond for a minute (a loaded machine; never a budget).
func within(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for give := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(give) {
			t.Fatalf("after a minute, still not: %s", what)
		}
	}
}

// caughtUp waits until the standby has replayed everything the primary
// has written so far.
func caughtUp(t *testing.T, primary, standby *gorm.DB) {
	t.Helper()
	var lsn string
	if err := primary.Raw("SELECT pg_current_wal_lsn()::text").Scan(&lsn).Error; err != nil {
		t.Fatal(err)
	}
	within(t, "the standby replays to "+lsn, func() bool {
		var ok bool
		return standby.Raw("SELECT pg_last_wal_replay_lsn() >= ?::pg_lsn", lsn).Scan(&ok).Error == nil && ok
	})
}

// TestStandbyHorizonNaive shows why the feed reads stay on the primary
// (services/replicas.go): with a transaction open on the primary and a
// later one committed, the feed's horizon computed on a standby lies above
// the open transaction's positions — a follower reading there would skip
// its events for good once it commits — while on the primary it lies at or
// below them.
func TestStandbyHorizonNaive(t *testing.T) {
	t.Parallel()
	_, primary, standby := replicated(t)
	ctx := context.Background()
	open, err := primary.DB()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := open.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var early int64
	beginHeld(t, ctx, conn)
	if err := conn.QueryRowContext(ctx, "SELECT pg_current_xact_id()::text::bigint").Scan(&early); err != nil {
		t.Fatal(err)
	}
	if err := primary.Exec("CREATE TABLE later (x int)").Error; err != nil { // a later transaction, committed
		t.Fatal(err)
	}
	caughtUp(t, primary, standby)
	var onPrimary, onStandby int64
	if err := primary.Raw(services.HorizonSQL, services.PositionsPerTx).Scan(&onPrimary).Error; err != nil {
		t.Fatal(err)
	}
	if err := standby.Raw(services.HorizonSQL, services.PositionsPerTx).Scan(&onStandby).Error; err != nil {
		t.Fatal(err)
	}
	first := early * services.PositionsPerTx // the open transaction's first position
	conn.ExecContext(ctx, "ROLLBACK")
	if onPrimary > first {
		t.Fatalf("on the primary the horizon %d lies above the open transaction's positions (from %d)", onPrimary, first)
	}
	if onStandby <= first {
		t.Fatalf("on the standby the horizon %d no longer skips the open transaction (from %d): the Reading in replicas.go is out of date", onStandby, first)
	}
	t.Logf("xid %d open on the primary: horizon there %d (safe), on the standby %d (naive: it would skip)", early, onPrimary/services.PositionsPerTx, onStandby/services.PositionsPerTx)
}

// TestReadReplicas (issue 24 item 2): reads that need no horizon go to the
// standby, a caller that wrote reads its write from the primary, a standby
// that lags past the bound, stops or is promoted leaves the rotation (the
// reads answering all along, from the primary) and comes back by itself.
func TestReadReplicas(t *testing.T) {
	t.Parallel()
	rep, primary, standby := replicated(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	forum := services.New(primary, services.Config{Standbys: []services.Standby{{Name: "standby", DB: standby}}, ReadMaxLag: time.Hour,
		Limits: func() services.Limits {
			l := services.DefaultLimits()
			l.RequestsPerMinute, l.PostsPerMinute = 100000, 100000
			return l
		}()})
	forum.StartReplicas(ctx, nil)
	inRotation := func(f *services.Forum, want bool) func() bool {
		return func() bool { s := f.Standbys(); return len(s) == 1 && s[0].InService == want }
	}
	within(t, "the standby joins the rotation", inRotation(forum, true))
	// A browser session resolves with replicas too (its admission reads
	// the same read-your-writes position).
	if err := forum.AddUser(ctx, "ada", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	session, err := forum.SignIn(ctx, "ada", "correct horse battery", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := forum.SessionCaller(ctx, session.Token); err != nil || got.Caller.Identity != "human:ada" {
		t.Fatalf("a session with read replicas: %+v, %v", got, err)
	}
	// A standby that did not answer at start joins once it does.
	var answers atomic.Bool
	late := services.New(primary, services.Config{Standbys: []services.Standby{{Name: "late", Open: func() (*gorm.DB, error) {
		if !answers.Load() {
			return nil, errors.New("connection refused")
		}
		return standby, nil
	}}}})
	late.StartReplicas(ctx, nil)
	within(t, "the late standby is reported down", func() bool { return strings.Contains(late.ReplicaProblem(), "does not answer") })
	answers.Store(true)
	within(t, "the late standby joins once it answers", inRotation(late, true))

	secret := func(handle string) string {
		tok, err := forum.CreateToken(ctx, services.TokenRequest{Handle: handle, Rights: []services.Right{services.RightRead, services.RightWrite}})
		if err != nil {
			t.Fatal(err)
		}
		return tok.Secret
	}
	writer, reader := secret("writer"), secret("reader")
	admit := func(f *services.Forum, secret string, op services.OpName) services.Caller {
		who, err := f.Admit(ctx, secret, op)
		if err != nil {
			t.Fatal(err)
		}
		return who
	}
	posts := 0
	post := func(body string) string {
		posts++ // numbered: a party's body is refused when it said it before (§14 rule 1)
		body = fmt.Sprintf("%s (%d)", body, posts)
		p, err := forum.Post(ctx, admit(forum, writer, services.OpPost), []byte(fmt.Sprintf(`{"kind":"ask","body":%q}`, body)))
		if err != nil {
			t.Fatal(err)
		}
		return p.Thread.ID
	}
	sees := func(f *services.Forum, secret, thread string) bool {
		_, err := f.ReadThread(ctx, admit(f, secret, services.OpReadThread), services.ThreadQuery{Thread: thread})
		if err != nil && !strings.Contains(err.Error(), "thread_not_found") {
			var r *services.Refusal
			if !asRefusal(err, &r) || r.Reason != services.ThreadNotFound {
				t.Fatalf("read_thread: %v", err)
			}
		}
		return err == nil
	}
	caughtUp(t, primary, standby)
	if err := standby.Exec("SELECT pg_wal_replay_pause()").Error; err != nil {
		t.Fatal(err)
	}
	th := post("Written while the standby's replay is paused")
	if !sees(forum, writer, th) {
		t.Fatal("the writer does not read its own write (read-your-writes)")
	}
	if sees(forum, reader, th) {
		t.Fatal("another caller read a write the paused standby lacks: its reads do not go to the standby")
	}
	// The same thread through a Forum whose bound the paused standby
	// exceeds: it leaves that rotation, and the reader's read falls back.
	strict := services.New(primary, services.Config{Standbys: []services.Standby{{Name: "standby", DB: standby}}, ReadMaxLag: 300 * time.Millisecond})
	strict.StartReplicas(ctx, nil)
	within(t, "the lagging standby leaves the rotation", func() bool {
		post("More writes, so that the primary's WAL moves on")
		return inRotation(strict, false)()
	})
	if p := strict.ReplicaProblem(); !strings.Contains(p, "lags") {
		t.Fatalf("ReplicaProblem %q, want it to say the standby lags", p)
	}
	if !sees(strict, reader, th) {
		t.Fatal("with the standby out of rotation, the reader's read does not come from the primary")
	}
	if err := standby.Exec("SELECT pg_wal_replay_resume()").Error; err != nil {
		t.Fatal(err)
	}
	within(t, "the standby rejoins once it caught up", inRotation(strict, true))
	within(t, "the reader sees the write on the standby", func() bool { return sees(forum, reader, th) })

	rep.StopStandby()
	th2 := post("Written with the standby down")
	if !sees(forum, reader, th) { // the standby fails the read: the primary answers
		t.Fatal("a read failed with the standby down")
	}
	within(t, "the stopped standby leaves the rotation", inRotation(forum, false))
	if !sees(forum, reader, th2) {
		t.Fatal("with the standby down, the reader does not see a new write")
	}
	rep.StartStandby()
	within(t, "the restarted standby rejoins", inRotation(forum, true))
	rep.Promote()
	within(t, "the promoted standby leaves the rotation", inRotation(forum, false))
	if p := forum.ReplicaProblem(); !strings.Contains(p, "promoted") {
		t.Fatalf("ReplicaProblem %q, want it to say the standby is promoted", p)
	}
	if !sees(forum, reader, post("After the promotion")) {
		t.Fatal("after the promotion, a new write is not read from the primary")
	}
}

// TestFeedOnStandbyNaiveSkips runs the follower check of the feed against
// a Forum reading the events on the standby, with the horizon the primary
// uses: a transaction that took its position first and commits last is
// skipped there for good — the reason the feed reads stay on the primary —
// while the follower on the primary is shown everything once.
func TestFeedOnStandbyNaiveSkips(t *testing.T) {
	t.Parallel()
	_, primary, standby := replicated(t)
	ctx := context.Background()
	forum, onStandby := services.New(primary, services.Config{}), services.New(standby, services.Config{})
	tok, err := forum.CreateToken(ctx, services.TokenRequest{Handle: "writer", Rights: []services.Right{services.RightRead, services.RightWrite}})
	if err != nil {
		t.Fatal(err)
	}
	who, err := forum.Authenticate(ctx, tok.Secret)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(body string) {
		if _, err := forum.Post(ctx, who, []byte(fmt.Sprintf(`{"kind":"ask","body":%q}`, body))); err != nil {
			t.Fatal(err)
		}
	}
	// follow reads the events above cursor, as a follower does, and
	// returns their ids and the next cursor.
	follow := func(f *services.Forum, cursor string) ([]string, string) {
		// A bound: settle answers what is final by then. Generous, since
		// under a loaded CI the read itself outlasted 500 ms once.
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		page, err := f.Events(rctx, who, services.EventsQuery{Since: cursor})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range page.Events {
			ids = append(ids, e.ID)
		}
		return ids, page.Cursor
	}
	ask("The first")
	caughtUp(t, primary, standby)
	_, start := follow(forum, "")
	pCursor, sCursor := start, start

	// A writer takes its position, and before it commits another commits.
	sqlDB, _ := primary.DB()
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	beginHeld(t, ctx, conn)
	if _, err := conn.ExecContext(ctx, `INSERT INTO events (seq, thread_id, type, from_state, to_state, origin, label, actor_identity, at)
		SELECT (pg_current_xact_id()::text::bigint + (SELECT value FROM log_sequence WHERE id = 1)) * $1, thread_id, type, from_state, to_state, origin, label, actor_identity, at
		FROM events ORDER BY seq LIMIT 1`, services.PositionsPerTx); err != nil {
		t.Fatal(err)
	}
	ask("The second, committed while the first writer is still open")
	caughtUp(t, primary, standby)
	var seenP, seenS []string
	ids, c := follow(forum, pCursor)
	seenP, pCursor = append(seenP, ids...), c
	ids, c = follow(onStandby, sCursor)
	seenS, sCursor = append(seenS, ids...), c
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, primary, standby)
	ids, _ = follow(forum, pCursor)
	seenP = append(seenP, ids...)
	ids, _ = follow(onStandby, sCursor)
	seenS = append(seenS, ids...)

	all, _ := follow(forum, start)
	if len(all) != 2 || len(seenP) != 2 || seenP[0] == seenP[1] {
		t.Fatalf("the follower on the primary was shown %v, want each of %v once", seenP, all)
	}
	if len(seenS) >= len(all) {
		t.Fatalf("the follower on the standby was shown %v of %v: the naive horizon no longer skips (replicas.go's Reading is out of date)", seenS, all)
	}
	t.Logf("events %v: the follower on the primary was shown %v, on the standby with the primary's horizon %v (it skipped the writer that committed last)", all, seenP, seenS)
}
