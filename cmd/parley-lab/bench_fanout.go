package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"parley/services"
)

// runFanout measures the feed's fan-out (issue 31, item 3): it holds
// waiters waiting inbox calls (wait_max_seconds, limit 1, from the log's
// current end), half at each server (--url, --url2: two processes on one
// database), waits until every one holds its slot, then posts one ask to
// anyone and times each call's answer from the post's. It reports the
// wake's latency (p50, p99, max), the database transactions the wake cost
// (pg_stat_database, counted statsSettle after the post so that every
// backend's statistics have arrived: the post itself, the notification,
// the reads, the slots' releases), and each server's memory and
// goroutines per waiting call (--server-pid, --server-pprof and their
// counterparts for the second server): resident memory (VmRSS), and the
// Go heap and goroutine stacks in use after two collections (the
// profiler's heap page with gc=1), each measured before the calls and
// while they wait.
//
// Each call is one connection and one goroutine of this client, reading
// its answer with a small buffer and a parser of its own (readAnswer): the
// client of ten thousand calls shares the machine with the servers (raise
// ulimit -n: a connection is a file). It collects its heap just before the
// ask, and reads the answers into pooled buffers (answerBodies), so that
// no collection of its own — which scans ten thousand goroutines' stacks,
// 100 ms of CPU — falls in the wake it measures, on the servers' cores.
// A call keeps its connection open until every call is answered, as an
// agent that calls again keeps it; with closeAtOnce each closes it as its
// answer arrives, so that the servers close ten thousand connections
// during the wake.
//
// With bare servers (`parley-lab bench bare`, fanoutServer.bare) it
// measures the limit the same way: the calls wait at the bare handlers,
// and the ask, posted through Parley at postVia, wakes them by its
// notification (bench_bare_fanout.go).
func runFanout(ctx context.Context, forum *services.Forum, dbURL string, srv [2]fanoutServer, postVia string, waiters int, closeAtOnce bool, st *stage, toks *fanoutTokens) (benchResult, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return benchResult{}, fmt.Errorf("fanout: %w", err)
	}
	defer conn.Close(ctx)
	if err := toks.ensure(ctx, forum, waiters); err != nil {
		return benchResult{}, err
	}
	// Each round leaves ten thousand dead slot rows, and rate windows:
	// unvacuumed, they slowed each round more than the last.
	if err := settle(ctx, dbURL, "(ANALYZE) streams, rate_windows"); err != nil {
		return benchResult{}, fmt.Errorf("fanout: %w", err)
	}
	since, err := forum.CurrentCursor(ctx)
	if err != nil {
		return benchResult{}, err
	}
	wait := forum.Limits().WaitMaxSeconds
	var before [2]serverMemory
	for i, s := range srv {
		before[i] = s.memory()
	}
	held, err := srv[0].waiting(ctx, conn, srv[1])
	if err != nil {
		return benchResult{}, err
	}
	var posted atomic.Bool
	var renewals atomic.Int64
	calls := make([]*fanoutCall, waiters)
	var hold chan struct{} // closed when the wake has been measured
	if !closeAtOnce {
		hold = make(chan struct{})
		defer close(hold)
	}
	start := time.Now()
	var dial sync.WaitGroup
	sem := make(chan struct{}, 64) // connections being opened at once
	for i := range calls {
		c := &fanoutCall{done: make(chan struct{}), hold: hold}
		calls[i] = c
		s := srv[i%2]
		dial.Add(1)
		sem <- struct{}{}
		go func() {
			c.run(ctx, s.url, toks.secrets[i/toks.per], since, wait, &posted, &renewals, func() { <-sem; dial.Done() })
		}()
	}
	dial.Wait()
	// Every call holds its slot: its first read found nothing and it waits.
	for {
		n, err := held()
		if err != nil {
			return benchResult{}, err
		}
		if n >= waiters {
			break
		}
		if time.Since(start) > 3*time.Minute {
			ended := map[string]int{}
			for _, c := range calls {
				select {
				case <-c.done:
					ended[fmt.Sprint(c.status, " ", c.err)]++
					if c.early != "" {
						ended["before the ask: "+c.early]++
					}
				default:
				}
			}
			return benchResult{}, fmt.Errorf("fanout: %d of %d calls wait after %s; ended: %v", n, waiters, time.Since(start).Round(time.Millisecond), ended)
		}
		time.Sleep(100 * time.Millisecond)
	}
	admitted := time.Since(start)
	// The admissions' statistics reach pg_stat_database within
	// statsSettle; then a quiet window as long as the wake's, for
	// comparison (waits renewed meanwhile are counted), then the wake.
	// When the admission, the settling and the quiet window together would
	// come within 3 s of a wait, the first calls' waits would end around
	// the ask (renewed calls would fill the window, and some would be
	// renewing as the ask comes): then there is no quiet window.
	quiet := admitted+2*statsSettle+3*time.Second < time.Duration(wait)*time.Second
	time.Sleep(statsSettle)
	// The memory of the calls waiting, once the admission's burst has
	// settled too: the server's idle connection workers of the burst have
	// gone (web: idleWorkers), and what is left is the calls'.
	var during [2]serverMemory
	for i, s := range srv {
		during[i] = s.memory()
	}
	tx0, err := transactionsNow(ctx, conn)
	if err != nil {
		return benchResult{}, err
	}
	renewed0 := renewals.Load()
	if quiet {
		time.Sleep(statsSettle)
	}
	tx1, err := transactionsNow(ctx, conn)
	if err != nil {
		return benchResult{}, err
	}
	renewed1 := renewals.Load()
	poster := newBenchClient(postVia, false).forAgent(st.agents[0].secret)
	db, err := newDBCPU(ctx, dbURL)
	if err != nil {
		return benchResult{}, err
	}
	defer db.conn.Close(ctx)
	// The wake's CPU: each server's, this client's (cpuSeconds is 0 for an
	// unknown pid, and so is its share).
	names, pids := [3]string{"server1", "server2", "client"}, [3]int{srv[0].pid, srv[1].pid, os.Getpid()}
	if srv[0].bare {
		names[0], names[1] = "bare1", "bare2"
	}
	var cpu0 [3]float64
	for i, pid := range pids {
		cpu0[i] = cpuSeconds(pid)
	}
	db.start()
	profiled := [2]<-chan struct{}{srv[0].profileWake(3), srv[1].profileWake(3)}
	time.Sleep(50 * time.Millisecond) // the profiles have begun
	runtime.GC()                      // none of this client's own in the wake
	load := loadAverage()
	posted.Store(true)
	r, err := poster.call(ctx, "post", map[string]any{"kind": "ask", "body": fmt.Sprintf("Fan-out %d/%d: who is there?", st.round, time.Now().UnixNano())})
	at := time.Now()
	if err != nil || r.status != http.StatusCreated {
		return benchResult{}, fmt.Errorf("fanout: post: %d %v %v", r.status, err, r.body)
	}
	give := time.After(time.Duration(wait) * time.Second)
	var lat []time.Duration
	errs := map[string]int{}
	for _, c := range calls {
		select {
		case <-c.done:
		case <-give:
			errs["not woken"]++
			continue
		}
		switch {
		case c.err != nil:
			errs["network"]++
		case c.status != http.StatusOK:
			errs[fmt.Sprint(c.status)]++
		case !c.found:
			errs["answered without the ask"]++
		default:
			lat = append(lat, max(0, c.at.Sub(at)))
		}
	}
	woken := time.Since(at)
	wakeCPU := map[string]float64{"postgres": db.end() * 1000}
	<-profiled[0]
	<-profiled[1]
	for i, pid := range pids {
		if pid > 0 {
			wakeCPU[names[i]] = (cpuSeconds(pid) - cpu0[i]) * 1000
		}
	}
	time.Sleep(max(0, statsSettle-woken))
	tx2, err := transactionsNow(ctx, conn)
	if err != nil {
		return benchResult{}, err
	}
	res := summarize("fanout", "http", waiters, woken, lat, errs)
	if srv[0].bare {
		res.Op += " (bare)"
	}
	res.Load = load
	slices.Sort(lat)
	if len(lat) > 0 {
		res.MinMs, res.MaxMs = float64(lat[0].Microseconds())/1000, float64(lat[len(lat)-1].Microseconds())/1000
	}
	res.WakeTransactions, res.QuietTransactions, res.QuietSkipped, res.WakeCPUMs = tx2-tx1, tx1-tx0, !quiet, wakeCPU
	res.QuietRenewals, res.WakeRenewals = renewed1-renewed0, renewals.Load()-renewed1
	res.AdmitSeconds = admitted.Seconds()
	for i := range srv {
		per := float64(waiters / 2)
		m := fanoutMemory{Server: srv[i].url}
		if before[i].rssKB > 0 && during[i].rssKB > 0 {
			m.RSSKB = float64(during[i].rssKB-before[i].rssKB) / per
		}
		if before[i].goroutines >= 0 && during[i].goroutines >= 0 {
			m.Goroutines = float64(during[i].goroutines-before[i].goroutines) / per
			m.HeapKB = float64(during[i].heap-before[i].heap) / 1024 / per
			m.LiveKB = float64(during[i].live-before[i].live) / 1024 / per
			m.StackKB = float64(during[i].stack-before[i].stack) / 1024 / per
		}
		res.PerWaiter = append(res.PerWaiter, m)
	}
	return res, nil
}

// fanoutServer is one server process of the fan-out: its URL, and its pid
// and profiler when known.
type fanoutServer struct {
	url, pprof string
	pid        int
	profileDir string // where to write its CPU profile of the wake, when set
	bare       bool   // a `parley-lab bench bare`: no slots, its parked calls counted at /parked
}

// waiting answers how to count the calls that wait at s and other beyond
// those that waited when it was called: the slots counted in the database
// for Parley's, the calls each bare handler says it holds for theirs.
func (s fanoutServer) waiting(ctx context.Context, conn *pgx.Conn, other fanoutServer) (func() (int, error), error) {
	if !s.bare {
		slots0, err := countWaits(ctx, conn)
		return func() (int, error) {
			n, err := countWaits(ctx, conn)
			return n - slots0, err
		}, err
	}
	return func() (int, error) {
		total := 0
		for _, b := range []fanoutServer{s, other} {
			resp, err := http.Get(b.url + "/parked")
			if err != nil {
				return 0, err
			}
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return 0, err
			}
			n, err := strconv.Atoi(string(raw))
			if err != nil {
				return 0, fmt.Errorf("fanout: %s/parked answered %q", b.url, raw)
			}
			total += n
		}
		return total, nil
	}, nil
}

// profileWake starts a CPU profile of the server's next seconds, written
// to its profile directory as wake-PORT.pprof; the returned channel closes
// once it is written (at once when there is nothing to profile).
func (s fanoutServer) profileWake(seconds int) <-chan struct{} {
	done := make(chan struct{})
	if s.pprof == "" || s.profileDir == "" {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", s.pprof, seconds))
		if err != nil {
			fmt.Fprintln(os.Stderr, "fanout: wake profile:", err)
			return
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		_, port, _ := strings.Cut(strings.TrimPrefix(s.url, "http://"), ":")
		if err := os.WriteFile(filepath.Join(s.profileDir, "wake-"+port+".pprof"), raw, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "fanout: wake profile:", err)
		}
	}()
	return done
}

// serverMemory is a server's memory and goroutines at one moment.
type serverMemory struct {
	rssKB       int64
	heap, stack int64 // bytes in use after a collection: the heap's spans, the stacks
	live        int64 // the heap's objects after a collection (HeapAlloc): heap less the spans' free room
	goroutines  int
}

func (s fanoutServer) memory() serverMemory {
	m := serverMemory{rssKB: residentKB(s.pid), goroutines: serverGoroutines(s.pprof)}
	if s.pprof == "" {
		return m
	}
	// Twice: a collection shrinks a goroutine's stack by half at most,
	// and the first one's figures still hold what it has not swept.
	for range 2 {
		resp, err := http.Get("http://" + s.pprof + "/debug/pprof/heap?debug=1&gc=1")
		if err != nil {
			m.goroutines = -1
			return m
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			line := sc.Text()
			fmt.Sscanf(line, "# HeapInuse = %d", &m.heap)
			fmt.Sscanf(line, "# HeapAlloc = %d", &m.live)
			fmt.Sscanf(line, "# Stack = %d", &m.stack)
		}
		resp.Body.Close()
	}
	return m
}

// fanoutMemory is one server's cost per waiting call.
type fanoutMemory struct {
	Server     string  `json:"server"`
	RSSKB      float64 `json:"rss_kb"`
	HeapKB     float64 `json:"heap_kb"`
	LiveKB     float64 `json:"live_kb"`
	StackKB    float64 `json:"stack_kb"`
	Goroutines float64 `json:"goroutines"`
}

// fanoutTokens are the waiting calls' tokens, made once for every round:
// at most waits_per_token calls each.
type fanoutTokens struct {
	per     int
	secrets []string
}

func (t *fanoutTokens) ensure(ctx context.Context, forum *services.Forum, waiters int) error {
	t.per = max(1, forum.Limits().WaitsPerToken)
	run := time.Now().UTC().Format("150405")
	for len(t.secrets)*t.per < waiters {
		tok, err := forum.CreateToken(ctx, services.TokenRequest{Handle: fmt.Sprintf("fanout-%s-%d", run, len(t.secrets)),
			Rights: []services.Right{services.RightRead}})
		if err != nil {
			return fmt.Errorf("fanout: token: %w", err)
		}
		t.secrets = append(t.secrets, tok.Secret)
	}
	return nil
}

// fanoutCall is one waiting inbox call on its own connection.
type fanoutCall struct {
	done   chan struct{}
	hold   <-chan struct{} // the connection stays open until it closes (nil: none)
	at     time.Time       // when its answer had arrived
	status int
	found  bool   // the answer holds an item
	early  string // an answer with an item before the ask was posted
	err    error
}

// run opens the connection, sends the call (then opened is called) and
// reads its answer. A wait that passes before the ask is posted is renewed
// on the same connection (renewals counts them): admitting ten thousand
// calls can take longer than one wait lasts; so is a call refused for a
// slow server (503) or a slot not yet released (429).
func (c *fanoutCall) run(ctx context.Context, base, secret, since string, wait int, posted *atomic.Bool, renewals *atomic.Int64, opened func()) {
	answered := sync.OnceFunc(func() { close(c.done) })
	defer answered()
	u, err := url.Parse(base)
	if err != nil {
		c.err = err
		opened()
		return
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		c.err = err
		opened()
		return
	}
	defer func() {
		answered()
		if c.hold != nil {
			<-c.hold
		}
		conn.Close()
	}()
	br := bufio.NewReaderSize(conn, 1024)
	request := fmt.Sprintf("GET /api/v1/inbox?wait=%d&limit=1&since=%s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n",
		wait, url.QueryEscape(since), u.Host, secret)
	for first := true; ; first = false {
		_, err = io.WriteString(conn, request)
		if first {
			opened()
		}
		if err != nil {
			c.err = err
			return
		}
		var body *[]byte
		c.status, body, c.err = readAnswer(br)
		c.at = time.Now()
		if body != nil {
			c.found = c.status == http.StatusOK && !bytes.Contains(*body, []byte(`"items":[]`))
			if c.found && !posted.Load() {
				c.early = string((*body)[:min(len(*body), 300)])
			}
			answerBodies.Put(body)
		}
		if c.err != nil || c.found || posted.Load() || ctx.Err() != nil {
			return
		}
		if c.status != http.StatusOK {
			if c.status != http.StatusServiceUnavailable && c.status != http.StatusTooManyRequests {
				return
			}
			time.Sleep(100 * time.Millisecond) // a server too slow to admit it in time: again
		}
		renewals.Add(1)
	}
}

// answerBodies are the buffers the calls read their answers' bodies into:
// an answer is looked at and let go, and a pooled buffer makes ten
// thousand of them allocate nothing.
var answerBodies = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// readAnswer reads one HTTP/1.1 answer: its status and its body, in a
// buffer of answerBodies taken once the head is read, so that a waiting
// call holds none (nil when the head cannot be read). The answer must
// have a Content-Length (Parley's JSON answers do). It is a few lines
// where net/http's ReadResponse builds a header map, so that ten thousand
// answers cost the client on the servers' cores as little as reading them
// can.
func readAnswer(br *bufio.Reader) (status int, body *[]byte, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, nil, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, nil, fmt.Errorf("fanout: not an HTTP answer: %q", line)
	}
	if status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return 0, nil, fmt.Errorf("fanout: status %q", line[9:12])
	}
	length := -1
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return status, nil, err
		}
		h := bytes.TrimRight(line, "\r\n")
		if len(h) == 0 {
			break
		}
		if name, value, ok := bytes.Cut(h, []byte(":")); ok && bytes.EqualFold(name, []byte("Content-Length")) {
			if length, err = strconv.Atoi(string(bytes.TrimSpace(value))); err != nil {
				return status, nil, fmt.Errorf("fanout: Content-Length %q", value)
			}
		}
	}
	if length < 0 {
		return status, nil, errors.New("fanout: an answer without Content-Length")
	}
	body = answerBodies.Get().(*[]byte)
	*body = slices.Grow((*body)[:0], length)[:length]
	_, err = io.ReadFull(br, *body)
	return status, body, err
}

// countWaits counts the waiting calls' slots that still count.
func countWaits(ctx context.Context, conn *pgx.Conn) (int, error) {
	var n int
	err := conn.QueryRow(ctx, "SELECT count(*) FROM streams WHERE kind = 'wait' AND ends_at > now()").Scan(&n)
	return n, err
}

// transactionsNow is the database's transactions so far, every backend's
// statistics that have arrived.
func transactionsNow(ctx context.Context, conn *pgx.Conn) (int64, error) {
	if _, err := conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		return 0, err
	}
	var n int64
	err := conn.QueryRow(ctx, `SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()`).Scan(&n)
	return n, err
}

// residentKB reads a process's resident memory (VmRSS) in KiB; 0 when
// unknown.
func residentKB(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb
		}
	}
	return 0
}
