package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/internal/testkit"
	"parley/models"
	"parley/services"
)

// follower collects what one follower of a feed was shown, in order.
type follower struct {
	name string
	mu   sync.Mutex
	seen map[string]int // id → times shown
	n    int
	note string // the last trouble it met, for a failing test
}

func (f *follower) trouble(s string) {
	f.mu.Lock()
	f.note = s
	f.mu.Unlock()
}

func newFollower(name string) *follower { return &follower{name: name, seen: map[string]int{}} }

func (f *follower) add(id string) {
	f.mu.Lock()
	f.seen[id]++
	f.n++
	f.mu.Unlock()
}

// check says what the follower missed of want or was shown twice.
func (f *follower) check(want map[string]bool) (missing int, repeated []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id := range want {
		if f.seen[id] == 0 {
			missing++
		}
	}
	for id, n := range f.seen {
		if n > 1 {
			repeated = append(repeated, fmt.Sprintf("%s ×%d", id, n))
		}
	}
	return missing, repeated
}

// followPoll follows a since feed (the inbox or the events) with waiting
// reads until ctx ends, retrying a failed read with the same cursor (a
// fault under way): a read that fails shows nothing, so the cursor only
// moves with what was shown.
func followPoll(ctx context.Context, base, token, path, list string, idOf func(any) string, f *follower) {
	client := &http.Client{Timeout: 30 * time.Second}
	cursor := ""
	for ctx.Err() == nil {
		q := url.Values{"wait": {"5"}, "limit": {"200"}}
		if cursor != "" {
			q.Set("since", cursor)
		}
		req, _ := http.NewRequestWithContext(ctx, "GET", base+path+"?"+q.Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		var out map[string]any
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		items, _ := out[list].([]any)
		for _, it := range items {
			f.add(idOf(it))
		}
		cursor = testkit.Str(out, "cursor")
	}
}

// followStream follows GET /api/v1/stream, reconnecting with
// Last-Event-ID after a break, and records each event's and inbox item's
// id. ready is closed once the first stream is admitted.
func followStream(ctx context.Context, base, token string, events, inbox *follower, ready chan<- struct{}) {
	last := ""
	first := true
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/stream", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept", "text/event-stream")
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			events.trouble(err.Error())
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if resp.StatusCode != http.StatusOK {
			events.trouble(fmt.Sprintf("stream answered %d", resp.StatusCode))
			resp.Body.Close()
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if first {
			close(ready)
			first = false
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var kind, id, data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				kind = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			case line == "" && id != "": // the end of an item with a cursor
				var v map[string]any
				json.Unmarshal([]byte(data), &v)
				switch kind {
				case "parley.event":
					events.add(testkit.Str(v, "id"))
				case "parley.inbox":
					inbox.add(testkit.Str(v, "message", "id"))
				}
				last = id
				kind, id, data = "", "", ""
			case line == "":
				kind, id, data = "", "", ""
			}
		}
		events.trouble(fmt.Sprintf("stream ended: %v", sc.Err()))
		resp.Body.Close()
	}
}

// TestFeedAcrossPaths (issue 24 item 3): three servers on one primary —
// A through PgBouncer in transaction mode (LISTEN direct), B with a
// streaming standby as its read replica, C direct — and 64 writers
// spread over them, each asking a watcher in threads of its own and
// reading each thread back through B right after posting it (read-your-
// writes across servers). Meanwhile PgBouncer is restarted, the standby
// stopped, started again and promoted. Followers of the inbox, the events
// and the stream on each server must see every turn and every event
// exactly once, and every acknowledged post is stored exactly once.
func TestFeedAcrossPaths(t *testing.T) {
	t.Parallel()
	rep := testkit.StartReplicated(t)
	primary, standby := rep.URL(false, "postgres"), rep.URL(true, "postgres")
	pgb := testkit.StartPgBouncer(t, primary)
	pooled := pgb.URL(primary)
	ok(t, parley(t, nil, "", "migrate", "--db", primary))
	forum := openForum(t, primary)
	ctx := context.Background()
	token := func(handle string) string {
		tok, err := forum.CreateToken(ctx, services.TokenRequest{Handle: handle, Rights: []services.Right{services.RightRead, services.RightWrite}})
		if err != nil {
			t.Fatal(err)
		}
		return tok.Secret
	}
	watcher := token("watcher")
	var writers []string
	for i := range 64 {
		writers = append(writers, token(fmt.Sprintf("writer%d", i)))
	}

	limits := []string{"--posts-per-minute", "100000", "--requests-per-minute", "100000", "--db-max-conns", "8"}
	servers := []*testkit.Proc{
		startServe(t, pooled, nil, append(limits, "--db-listen-url", primary)...),
		startServe(t, primary, nil, append(limits, "--db-read-url", standby, "--db-read-max-lag", "2s")...),
		startServe(t, primary, nil, limits...),
	}
	replica := servers[1]
	eventually(t, "B's standby joins the rotation", func() bool { return readyz(replica) == "ready" })

	// Waiters through PgBouncer (A) woken by posts direct (C).
	waiter := token("waiter")
	took := wakeups(t, &httpAgent{t: t, base: servers[0].URL(""), token: waiter}, &httpAgent{t: t, base: servers[2].URL(""), token: writers[0]}, "ainotes:waiter", 20)
	t.Logf("a waiter through PgBouncer woken by a post direct: median %v, p95 %v, max %v", took[len(took)/2], took[len(took)*95/100], took[len(took)-1])
	if took[len(took)-1] > wakeBound {
		t.Fatalf("a waiter through PgBouncer woke late: %v", took)
	}

	follow, stop := context.WithCancel(ctx)
	defer stop()
	var followers []*follower
	var done sync.WaitGroup
	eventID := func(v any) string { return testkit.Str(v, "id") }
	turnID := func(v any) string { return testkit.Str(v, "message", "id") }
	for i, srv := range servers {
		ev, in := newFollower(fmt.Sprintf("events on %c", 'A'+i)), newFollower(fmt.Sprintf("inbox on %c", 'A'+i))
		sev, sin := newFollower(fmt.Sprintf("stream events on %c", 'A'+i)), newFollower(fmt.Sprintf("stream inbox on %c", 'A'+i))
		followers = append(followers, ev, in, sev, sin)
		ready := make(chan struct{})
		done.Add(3)
		go func() {
			defer done.Done()
			followPoll(follow, srv.URL(""), watcher, "/api/v1/events", "events", eventID, ev)
		}()
		go func() {
			defer done.Done()
			followPoll(follow, srv.URL(""), watcher, "/api/v1/inbox", "items", turnID, in)
		}()
		go func() { defer done.Done(); followStream(follow, srv.URL(""), watcher, sev, sin, ready) }()
		<-ready
	}

	// The writers: each asks the watcher in new threads on its server and
	// reads the thread back through B.
	const asksEach = 5
	var (
		mu       sync.Mutex
		acks     []ack
		failed   int
		unseen   []string
		progress sync.WaitGroup
	)
	posted := make(chan struct{}, 64*asksEach)
	client := &http.Client{Timeout: 20 * time.Second}
	for i, tok := range writers {
		srv := servers[i%3]
		progress.Add(1)
		go func() {
			defer progress.Done()
			for n := range asksEach {
				body := fmt.Sprintf("writer %d ask %d", i, n)
				status, out, err := call(client, "POST", srv.URL("/api/v1/messages"), tok,
					map[string]any{"kind": "ask", "body": body, "to": map[string]any{"identity": "ainotes:watcher"}})
				if err != nil || status != http.StatusCreated {
					mu.Lock()
					failed++
					mu.Unlock()
					continue
				}
				th := testkit.Str(out, "thread", "id")
				mu.Lock()
				acks = append(acks, ack{th, testkit.Str(out, "message", "id"), body})
				mu.Unlock()
				posted <- struct{}{}
				status, view, err := call(client, "GET", replica.URL("/api/v1/threads/"+th), tok, nil)
				if err == nil && status != http.StatusOK {
					mu.Lock()
					unseen = append(unseen, fmt.Sprintf("%s: %d %v", th, status, view))
					mu.Unlock()
				}
			}
		}()
	}
	// The faults, each once a share of the posts is in.
	waitPosts := func(n int) {
		for range n {
			<-posted
		}
	}
	waitPosts(40)
	pgb.Restart()
	waitPosts(40)
	rep.StopStandby()
	eventually(t, "B reports its standby out of rotation", func() bool { return strings.Contains(readyz(replica), "out of rotation") })
	waitPosts(20)
	rep.StartStandby()
	eventually(t, "B's standby rejoins", func() bool { return readyz(replica) == "ready" })
	waitPosts(20)
	rep.Promote()
	eventually(t, "B takes the promoted standby out of rotation", func() bool { return strings.Contains(readyz(replica), "promoted") })
	progress.Wait()
	t.Logf("%d posts acknowledged, %d failed (during the faults)", len(acks), failed)
	if len(unseen) > 0 {
		t.Fatalf("%d writers did not read their own post back through B: %v", len(unseen), unseen[:min(5, len(unseen))])
	}
	if len(acks) < 64*asksEach/2 {
		t.Fatalf("only %d of %d posts acknowledged", len(acks), 64*asksEach)
	}
	checkStored(t, primary, servers[2], watcher, acks)

	// What each follower must have seen: every event and every turn the
	// watcher was asked, as the primary holds them.
	// A post whose answer a fault cut off may be stored all the same: the
	// turns are the primary's, not the acknowledgements.
	turns, events := map[string]bool{}, map[string]bool{}
	var ids []int64
	pdb, err := models.Open(primary)
	if err != nil {
		t.Fatal(err)
	}
	if sqlDB, err := pdb.DB(); err == nil {
		defer sqlDB.Close()
	}
	if err := pdb.Raw("SELECT id FROM messages WHERE to_identity = ?", "ainotes:watcher").Scan(&ids).Error; err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		turns[fmt.Sprintf("msg_%d", id)] = true
	}
	_, all, err := call(client, "GET", servers[2].URL("/api/v1/events?limit=200"), watcher, nil)
	for err == nil {
		list, _ := all["events"].([]any)
		for _, e := range list {
			events[testkit.Str(e, "id")] = true
		}
		if len(list) == 0 {
			break
		}
		_, all, err = call(client, "GET", servers[2].URL("/api/v1/events?limit=200&since="+testkit.Str(all, "cursor")), watcher, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(events) < len(acks) {
		t.Fatalf("%d events for %d asks", len(events), len(acks))
	}
	for _, f := range followers {
		want := turns
		if strings.Contains(f.name, "events") {
			want = events
		}
		for give := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if m, _ := f.check(want); m == 0 {
				break
			} else if time.Now().After(give) {
				f.mu.Lock()
				note := f.note
				f.mu.Unlock()
				t.Fatalf("after a minute, %s misses %d of %d (%s):\n%s", f.name, m, len(want), note, streamLines(servers[0].Stderr.String()))
			}
		}
	}
	stop()
	done.Wait()
	for _, f := range followers {
		want := turns
		if strings.Contains(f.name, "events") {
			want = events
		}
		if missing, repeated := f.check(want); missing != 0 || len(repeated) > 0 {
			t.Errorf("%s: %d missing, shown twice: %v", f.name, missing, repeated)
		}
		if f.n != len(want) {
			t.Errorf("%s was shown %d items, want %d", f.name, f.n, len(want))
		}
	}
}

// streamLines are a server log's lines about streams and errors.
func streamLines(log string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "stream") || strings.Contains(l, "level=ERROR") || strings.Contains(l, "level=WARN") {
			out = append(out, l)
		}
	}
	return strings.Join(out[max(0, len(out)-40):], "\n")
}
