package services_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/migrations"
	"parley/migrations/dbtest"
	"parley/models"
	"parley/services"
)

// shardDatabases makes n databases of their own on the test server, each
// with Parley's schema: independent PostgreSQL databases standing in for
// the shards of a distributed one (each has its own horizon: the feed's
// horizon counts only its own database's transactions).
func shardDatabases(t *testing.T, n int) []*gorm.DB {
	t.Helper()
	base := dbtest.PostgresURL(t)
	admin, err := models.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	adminSQL, _ := admin.DB()
	var out []*gorm.DB
	for i := range n {
		name := fmt.Sprintf("shard_%s_%d", strings.ToLower(rand.Text()[:10]), i)
		if err := admin.Exec("CREATE DATABASE " + name).Error; err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(base)
		u.Path = "/" + name
		db, err := models.Open(u.String())
		if err != nil {
			t.Fatal(err)
		}
		sqlDB, _ := db.DB()
		t.Cleanup(func() {
			sqlDB.Close()
			admin.Exec("DROP DATABASE " + name + " WITH (FORCE)")
		})
		if _, err := migrations.Up(context.Background(), db); err != nil {
			t.Fatal(err)
		}
		out = append(out, db)
	}
	t.Cleanup(func() { adminSQL.Close() })
	return out
}

// vectorFollower follows the events and the inbox of every shard with a
// vector cursor, {shard: position} (each shard's own cursor string), and
// records each item as shard/id.
type vectorFollower struct {
	mu              sync.Mutex
	events, turns   map[string]int
	eventsC, inboxC []string
}

func (v *vectorFollower) round(ctx context.Context, shards []*services.Forum, who []services.Caller) {
	for s, f := range shards {
		rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		page, err := f.Events(rctx, who[s], services.EventsQuery{Since: v.eventsC[s], Limit: "100"})
		cancel()
		if err != nil {
			continue // past the round's bound (a held shard): that shard next round, its cursor unmoved
		}
		rctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
		box, err := f.Inbox(rctx, who[s], services.InboxQuery{Since: v.inboxC[s], Limit: "100"})
		cancel()
		if err != nil {
			continue
		}
		v.mu.Lock()
		for _, e := range page.Events {
			v.events[fmt.Sprintf("%d/%s", s, e.ID)]++
		}
		for _, it := range box.Items {
			v.turns[fmt.Sprintf("%d/%s", s, it.Message.ID)]++
		}
		v.eventsC[s], v.inboxC[s] = page.Cursor, box.Cursor
		v.mu.Unlock()
	}
}

func (v *vectorFollower) count(prefix string) (n int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for k := range v.events {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}

// TestVectorCursorSimulation (issue 24 item 4, docs/scaling.md): the
// forum's threads spread by id over three independent databases, each
// with today's log positions, and followers whose cursors are vectors
// {shard: position}. 12 writers ask a watcher, each in threads of its
// own on shard (thread number mod 3); meanwhile one shard is held back by
// a transaction that took a position and commits last. The followers keep
// receiving the other shards' events while it is held, and in the end each
// has been shown every event and every turn of every shard exactly once.
func TestVectorCursorSimulation(t *testing.T) {
	t.Parallel()
	const n = 3
	dbs := shardDatabases(t, n)
	ctx := context.Background()
	var shards []*services.Forum
	var watchers, writers [][]services.Caller
	limits := services.DefaultLimits()
	limits.PostsPerMinute, limits.RequestsPerMinute = 100000, 100000
	for _, db := range dbs {
		f := services.New(db, services.Config{Limits: limits})
		shards = append(shards, f)
		caller := func(handle string) services.Caller {
			tok, err := f.CreateToken(ctx, services.TokenRequest{Handle: handle, Rights: []services.Right{services.RightRead, services.RightWrite}})
			if err != nil {
				t.Fatal(err)
			}
			who, err := f.Authenticate(ctx, tok.Secret)
			if err != nil {
				t.Fatal(err)
			}
			return who
		}
		watchers = append(watchers, []services.Caller{caller("watcher")})
		var ws []services.Caller
		for i := range 12 {
			ws = append(ws, caller(fmt.Sprintf("writer%d", i)))
		}
		writers = append(writers, ws)
	}
	who := make([]services.Caller, n)
	for s := range n {
		who[s] = watchers[s][0]
	}
	followers := make([]*vectorFollower, 3)
	for i := range followers {
		followers[i] = &vectorFollower{events: map[string]int{}, turns: map[string]int{}, eventsC: make([]string, n), inboxC: make([]string, n)}
	}
	follow, stop := context.WithCancel(ctx)
	var done sync.WaitGroup
	for _, v := range followers {
		done.Add(1)
		go func() {
			defer done.Done()
			for follow.Err() == nil {
				v.round(ctx, shards, who)
			}
		}()
	}

	const asks = 8
	var wg sync.WaitGroup
	round := 0 // numbered: a party's body is refused when it said it before (§14 rule 1)
	write := func() {
		round++
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range asks {
					thread := i*asks + k // the forum's thread number; its shard is thread mod n
					s := thread % n
					body := fmt.Sprintf(`{"kind":"ask","body":"thread %d by writer %d, round %d","to":{"identity":"ainotes:watcher"}}`, thread, i, round)
					if _, err := shards[s].Post(ctx, writers[s][i], []byte(body)); err != nil {
						t.Errorf("post on shard %d: %v", s, err)
					}
				}
			}()
		}
	}
	write()
	wg.Wait()
	perShard := 12 * asks / n // the events of one shard per round of writes
	within(t, "the followers are shown the first round", func() bool {
		return followers[0].count("0/") == perShard && followers[0].count("1/") == perShard && followers[0].count("2/") == perShard
	})
	// Shard 1 held back: a writer took its position and has not committed.
	sqlDB, _ := dbs[1].DB()
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	beginHeld(t, ctx, conn)
	res, err := conn.ExecContext(ctx, `INSERT INTO events (seq, thread_id, type, from_state, to_state, origin, label, actor_identity, at)
		SELECT `+strings.Replace(services.PositionSQL, "?", "$1", 1)+`, thread_id, type, from_state, to_state, origin, label, actor_identity, at
		FROM events ORDER BY seq LIMIT 1`, services.PositionsPerTx)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("the held writer wrote %d events", n)
	}
	write() // more writes on every shard while shard 1 is held
	wg.Wait()
	within(t, "the followers are shown the other shards' new events while shard 1 is held", func() bool {
		return followers[0].count("0/") == 2*perShard && followers[0].count("2/") == 2*perShard
	})
	if got := followers[0].count("1/"); got != perShard {
		t.Fatalf("while its older writer is open, shard 1 showed %d events, want the %d before it: a later one was shown first", got, perShard)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}

	// Everything each shard holds, read from the start.
	wantEvents, wantTurns := map[string]bool{}, map[string]bool{}
	for s, f := range shards {
		cursor := ""
		for {
			page, err := f.Events(ctx, who[s], services.EventsQuery{Since: cursor, Limit: "200"})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page.Events {
				wantEvents[fmt.Sprintf("%d/%s", s, e.ID)] = true
			}
			if len(page.Events) == 0 {
				break
			}
			cursor = page.Cursor
		}
		var ids []int64
		dbs[s].Raw("SELECT id FROM messages WHERE to_identity = 'ainotes:watcher'").Scan(&ids)
		for _, id := range ids {
			wantTurns[fmt.Sprintf("%d/msg_%d", s, id)] = true
		}
	}
	complete := func(v *vectorFollower) bool {
		v.mu.Lock()
		defer v.mu.Unlock()
		return len(v.events) == len(wantEvents) && len(v.turns) == len(wantTurns)
	}
	for i, v := range followers {
		within(t, fmt.Sprintf("follower %d is shown everything", i), func() bool { return complete(v) })
	}
	stop()
	done.Wait()
	for i, v := range followers {
		for k := range wantEvents {
			if v.events[k] != 1 {
				t.Errorf("follower %d was shown event %s %d times", i, k, v.events[k])
			}
		}
		for k := range wantTurns {
			if v.turns[k] != 1 {
				t.Errorf("follower %d was shown turn %s %d times", i, k, v.turns[k])
			}
		}
		if len(v.events) != len(wantEvents) || len(v.turns) != len(wantTurns) {
			t.Errorf("follower %d was shown %d events and %d turns, want %d and %d", i, len(v.events), len(v.turns), len(wantEvents), len(wantTurns))
		}
	}
	t.Logf("%d shards, %d events and %d turns: every follower shown each once, shard 1 held back by an open writer meanwhile", n, len(wantEvents), len(wantTurns))
}
