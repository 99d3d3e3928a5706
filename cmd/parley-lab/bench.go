package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"parley/internal/cli"
	"parley/services"
)

// runBench drives a running server the way agents do — each simulated agent
// with its own token, posting from its own extensions — for a fixed time
// per operation, and prints each operation's throughput, latency
// percentiles and errors. It reaches the database directly (--db) only to
// set the stage: tokens, 1,000 threads, a 500-message thread.
//
//	parley-lab bench --url http://127.0.0.1:8080 --db URL [--agents 16] [--duration 10s]
//	             [--ops posts,hot,read,read304,inbox,list] [--mcp] [--json] [--server-pid PID]
//	             [--pgbench] [--bare URL] [--bare-pid PID] [--rounds N]
//	parley-lab bench --ops fanout --waiters 10000 --url URL --url2 URL2 --db URL
//	             [--server-pid PID --server-pprof ADDR --server2-pid PID --server2-pprof ADDR]
//	             [--bare URL --bare2 URL [--bare-pid PID --bare2-pid PID]] [--rounds N]
//	parley-lab bench bare --db URL [--addr 127.0.0.1:18092]
//	parley-lab bench seed --db URL [--threads 100000] [--messages 1000000]
//	parley-lab bench search --db URL [--queries 2000] [--threads 100000] [--explain] [--json]
func runBench(args []string) error {
	fs := cli.NewFlagSet("parley-lab bench", "parley-lab bench --url URL --db URL [--agents N] [--duration D] [--ops LIST] [--mcp] [--json] [--server-pid PID] [--pgbench] [--bare URL] [--rounds N] [--warmup D]")
	base := fs.String("url", "http://127.0.0.1:8080", "the running server's base `URL`")
	base2 := fs.String("url2", "", "deliver: a second server process on the same database (default: --url)")
	agents := fs.Int("agents", 16, "simulated `agents`, each with its own token and connection")
	duration := fs.Duration("duration", 10*time.Second, "how long each operation runs")
	ops := fs.String("ops", strings.Join(benchOps[:len(benchOps)-1], ","), "the `operations` to run, in order (fanout only when named)")
	overMCP := fs.Bool("mcp", false, "call the MCP tools at /mcp instead of the HTTP API")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	pid := fs.Int("server-pid", 0, "the server's `pid`, to report its peak resident memory")
	waiters := fs.Int("waiters", 0, "hold this many waiting inbox calls open during the run (the feed's load)")
	streams := fs.Int("streams", 0, "hold this many event streams open during the run")
	pprofAddr := fs.String("server-pprof", "", "the server's --pprof `address`, to report its goroutines")
	pid2 := fs.Int("server2-pid", 0, "fanout: the second server's (--url2) `pid`")
	pprof2 := fs.String("server2-pprof", "", "fanout: the second server's --pprof `address`")
	fanoutClose := fs.Bool("fanout-close", false, "fanout: each call closes its connection as its answer arrives, instead of keeping it open until every call is answered")
	wakeProfile := fs.String("wake-profile", "", "fanout: write each server's CPU profile of the 3 s from the ask into this `directory` (needs --server-pprof and --server2-pprof)")
	bareURL := fs.String("bare", "", "posts, read and (with --bare2) fanout: run each against this `URL` of `parley-lab bench bare` too, taking turns with Parley")
	barePid := fs.Int("bare-pid", 0, "the bare handler's `pid`, to report its CPU time per operation")
	bare2URL := fs.String("bare2", "", "fanout: a second `URL` of `parley-lab bench bare` (the bare fan-out's second process, as --url2 is Parley's)")
	bare2Pid := fs.Int("bare2-pid", 0, "fanout: the second bare handler's `pid`")
	rounds := fs.Int("rounds", 1, "run the operations this many times over, interleaved (the machine is noisy)")
	warmup := fs.Duration("warmup", time.Second, "run each operation this long, unmeasured, before the first round: connections opened, statements prepared (pgbench, too, leaves out its connection time)")
	withPgbench := fs.Bool("pgbench", false, "before posts, run an independent minimal post transaction (lock the thread's row, insert the message, update the thread, insert an event) in pgbench on --db (PostgreSQL): the limit posts are measured against")
	pgbenchScript := fs.String("pgbench-script", "minimal_post", "the pgbench script of --pgbench: minimal_post, or parley_post_old (Parley's statements before they were batched, for comparison)")
	withDBCPU := fs.Bool("db-cpu", false, "measure PostgreSQL's CPU per operation: the backends connected to --db, read from /proc (the database on this machine)")
	var cfg cli.Config
	cfg.DBFlag(fs)
	cfg.RealmFlag(fs)
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	for _, op := range strings.Split(*ops, ",") {
		if !contains(benchOps, op) {
			return cli.Usagef("bench: unknown operation %q: use %s", op, strings.Join(benchOps, ","))
		}
	}
	ctx := context.Background()
	forum, closeDB, err := cfg.Forum(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	stage, err := setStage(ctx, forum, *agents)
	if err != nil {
		return fmt.Errorf("bench: setting the stage: %w", err)
	}
	client := newBenchClient(*base, *overMCP)
	var results []benchResult
	fanout := contains(strings.Split(*ops, ","), "fanout")
	if fanout && (*waiters < 2 || *base2 == "") {
		return cli.Usagef("bench: fanout needs --waiters N (N >= 2) and --url2")
	}
	if (*waiters > 0 || *streams > 0) && !fanout {
		before := serverGoroutines(*pprofAddr)
		lctx, stop := context.WithCancel(ctx)
		held, err := listeners(lctx, forum, *base, *waiters, *streams)
		if err != nil {
			stop()
			return err
		}
		defer func() { stop(); held.Wait() }()
		time.Sleep(2 * time.Second) // all of them waiting
		fmt.Fprintf(os.Stderr, "holding %d waiting calls and %d streams; server goroutines %d before, %d now\n",
			*waiters, *streams, before, serverGoroutines(*pprofAddr))
	}
	var fanTokens fanoutTokens
	if *warmup > 0 {
		stage.round = -1 // bodies unlike any of the rounds', for the guard
		for _, op := range strings.Split(*ops, ",") {
			if op == "fanout" || op == "idle" {
				continue // nothing to warm up
			}
			if *bareURL != "" && (op == "posts" || op == "read") {
				if _, err := runOp(ctx, newBenchClient(*bareURL, false), stage, op, *warmup, ""); err != nil {
					return err
				}
			}
			if _, err := runOp(ctx, client, stage, op, *warmup, *base2); err != nil {
				return err
			}
		}
	}
	var dbc *dbCPU // nil: not measured
	if *withDBCPU {
		if dbc, err = newDBCPU(ctx, cfg.DB); err != nil {
			return fmt.Errorf("--db-cpu: %w", err)
		}
	}
	for round := range max(1, *rounds) {
		if *rounds > 1 {
			fmt.Fprintf(os.Stderr, "round %d, load average %s\n", round+1, loadAverage())
		}
		stage.round = round // the guard refuses a body said before
		for _, op := range strings.Split(*ops, ",") {
			// The references and Parley take turns at going first (see
			// turns); each posts run starts after a VACUUM of what posts
			// rewrite (settle), so that none pays for another's dead rows.
			var refs []func() (benchResult, error)
			if op == "posts" && *withPgbench {
				refs = append(refs, func() (benchResult, error) {
					dbc.start()
					limit, err := runPgbench(cfg.DB, *pgbenchScript, stage, *agents, *duration)
					if err != nil {
						return limit, err
					}
					limit.Ops = int(limit.PerSecond * limit.Seconds)
					limit.setDBCPU(dbc.end())
					return limit, nil
				})
			}
			if *bareURL != "" && (op == "posts" || op == "read") {
				refs = append(refs, func() (benchResult, error) {
					cpu := cpuSeconds(*barePid)
					dbc.start()
					r, err := runOp(ctx, newBenchClient(*bareURL, false), stage, op, *duration, "")
					if err != nil {
						return r, err
					}
					r.setDBCPU(dbc.end())
					r.Op += " (bare)"
					r.setCPU(cpu, cpuSeconds(*barePid))
					return r, nil
				})
			}
			parley := func() (benchResult, error) {
				cpu := cpuSeconds(*pid)
				dbc.start()
				r, err := runOp(ctx, client, stage, op, *duration, *base2)
				if err != nil {
					return r, err
				}
				r.setDBCPU(dbc.end())
				r.RSSMiB = peakRSS(*pid)
				r.setCPU(cpu, cpuSeconds(*pid))
				return r, nil
			}
			if op == "fanout" {
				if *bareURL != "" && *bare2URL != "" {
					refs = append(refs, func() (benchResult, error) {
						srv := [2]fanoutServer{{url: *bareURL, pid: *barePid, bare: true}, {url: *bare2URL, pid: *bare2Pid, bare: true}}
						return runFanout(ctx, forum, cfg.DB, srv, *base, *waiters, *fanoutClose, stage, &fanTokens)
					})
				}
				parley = func() (benchResult, error) {
					srv := [2]fanoutServer{{url: *base, pid: *pid, pprof: *pprofAddr, profileDir: *wakeProfile}, {url: *base2, pid: *pid2, pprof: *pprof2, profileDir: *wakeProfile}}
					return runFanout(ctx, forum, cfg.DB, srv, *base, *waiters, *fanoutClose, stage, &fanTokens)
				}
			}
			if op == "idle" {
				r, err := runIdle(ctx, cfg.DB, *duration, *pid, *waiters+*streams)
				if err != nil {
					return err
				}
				results = append(results, r)
				continue
			}
			for _, run := range turns(append(refs, parley), round) {
				if op == "posts" {
					if err := stage.breakRuns(ctx, forum); err != nil {
						return err
					}
					if err := settle(ctx, cfg.DB, postTables); err != nil {
						return err
					}
				}
				r, err := run()
				if err != nil {
					return err
				}
				r.Round = round + 1
				results = append(results, r)
			}
		}
	}
	ratios(results)
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	printTable(os.Stdout, results)
	return nil
}

// turns is the order of an operation's runs in a round: the references
// first in the first round, then each run in turn goes first. A run of
// posts leaves the forum larger than it found it, so whoever always ran
// last (Parley) paid for the others.
func turns(runs []func() (benchResult, error), round int) []func() (benchResult, error) {
	k := round % len(runs)
	return append(runs[len(runs)-k:len(runs):len(runs)], runs[:len(runs)-k]...)
}

// benchOps are the operations bench knows, in their default order; the
// last, fanout, runs only when named (it needs --waiters and --url2).
var benchOps = []string{"posts", "hot", "read", "read304", "inbox", "list", "deliver", "idle", "fanout"}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// runOp runs one operation with every agent at once for d.
func runOp(ctx context.Context, client benchClient, st *stage, op string, d time.Duration, base2 string) (benchResult, error) {
	if base2 == "" {
		base2 = client.base
	}
	second := benchClient{base: base2, mcp: client.mcp}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		all []time.Duration
		bad = map[string]int{}
	)
	st.runs++
	run := st.runs
	start := time.Now()
	for i, agent := range st.agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{st: st, agent: agent, client: client.forAgent(agent.secret), n: i, run: run}
			if op == "deliver" {
				w.waiter = second.forAgent(agent.secret)
				w.poster = client.forAgent(st.agents[(i+1)%len(st.agents)].secret)
			}
			lat, errs := w.loop(ctx, op)
			mu.Lock()
			all = append(all, lat...)
			for k, v := range errs {
				bad[k] += v
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return summarize(op, client.transport(), len(st.agents), time.Since(start), all, bad), nil
}

// stage is what the benchmark acts on.
type stage struct {
	agents  []benchAgent
	threads []string // 1,000 threads for posts
	big     string   // a thread of 500 messages, for reads
	hot     *hotThread
	round   int // of --rounds, in the bodies
	runs    int // runOp's runs so far, in the bodies: no two runs post the same body
	human   services.Caller
	breaks  int // breakRuns' notes so far
}

// breakRuns posts a human's note into each of the threads posts go to,
// unmeasured, so that no run meets the guard's pause (docs/protocol.md §14
// rule 3: guard_thread_run_max model messages in a row; a human's act
// starts the count again). Three rounds of 15 s at 1,700 posts/s put 75
// into a thread on average, and some threads reached 100.
func (st *stage) breakRuns(ctx context.Context, forum *services.Forum) error {
	for _, th := range st.threads {
		st.breaks++
		raw, _ := json.Marshal(map[string]any{"kind": "note", "thread": th, "body": fmt.Sprintf("A human's turn, %d.", st.breaks)})
		if _, err := forum.Post(ctx, st.human, raw); err != nil {
			return fmt.Errorf("a human's note in %s: %w", th, err)
		}
	}
	return nil
}

type benchAgent struct {
	identity, secret string
}

// setStage creates the agents' tokens and the threads, through the
// services, so that every rule holds as if clients had made them.
func setStage(ctx context.Context, forum *services.Forum, agents int) (*stage, error) {
	run := time.Now().UTC().Format("150405")
	st := &stage{}
	for i := range agents {
		tok, err := forum.CreateToken(ctx, services.TokenRequest{
			Handle: fmt.Sprintf("bench-%s-%d", run, i), Rights: []services.Right{services.RightRead, services.RightWrite}})
		if err != nil {
			return nil, err
		}
		st.agents = append(st.agents, benchAgent{identity: tok.Token.Identity, secret: tok.Secret})
	}
	seeder, err := benchCaller(ctx, forum, "bench-"+run+"-seeder")
	if err != nil {
		return nil, err
	}
	other, err := benchCaller(ctx, forum, "bench-"+run+"-other")
	if err != nil {
		return nil, err
	}
	post := func(who services.Caller, env map[string]any) (services.Posted, error) {
		raw, _ := json.Marshal(env)
		return forum.Post(ctx, who, raw)
	}
	for i := range 1000 {
		p, err := post(seeder, map[string]any{"kind": "ask", "body": fmt.Sprintf("Bench topic %d: which option?", i)})
		if err != nil {
			return nil, err
		}
		st.threads = append(st.threads, p.Thread.ID)
	}
	big, err := post(seeder, map[string]any{"kind": "ask", "body": "A long discussion to read."})
	if err != nil {
		return nil, err
	}
	st.big = big.Thread.ID
	// A human's note now and then: the guard (§14) pauses a thread after
	// guard_thread_run_max model messages in a row.
	human, err := benchHuman(ctx, forum, "bench-"+run)
	if err != nil {
		return nil, err
	}
	st.human = human
	for i := range 499 {
		if i%50 == 49 {
			if _, err := post(human, map[string]any{"kind": "note", "thread": st.big, "body": fmt.Sprintf("A human's remark %d.", i)}); err != nil {
				return nil, err
			}
			continue
		}
		if _, err := post(other, map[string]any{"kind": "note", "thread": st.big, "from": map[string]any{"extension": fmt.Sprintf("w%d", i%4)},
			"body": fmt.Sprintf("Point %d of the discussion, with some words to make it a realistic length for a message.", i)}); err != nil {
			return nil, err
		}
	}
	hot, err := post(seeder, map[string]any{"kind": "ask", "body": "The hot thread."})
	if err != nil {
		return nil, err
	}
	st.hot = &hotThread{id: hot.Thread.ID}
	return st, nil
}

func benchHuman(ctx context.Context, forum *services.Forum, name string) (services.Caller, error) {
	if err := forum.AddUser(ctx, name, "bench-"+name+"-password"); err != nil {
		return services.Caller{}, err
	}
	tok, err := forum.CreateToken(ctx, services.TokenRequest{Human: name})
	if err != nil {
		return services.Caller{}, err
	}
	return forum.Authenticate(ctx, tok.Secret)
}

func benchCaller(ctx context.Context, forum *services.Forum, handle string) (services.Caller, error) {
	tok, err := forum.CreateToken(ctx, services.TokenRequest{Handle: handle, Rights: []services.Right{services.RightRead, services.RightWrite}})
	if err != nil {
		return services.Caller{}, err
	}
	return forum.Authenticate(ctx, tok.Secret)
}

// hotThread is the one thread every agent posts into; when it is full
// (thread_max_messages), the agent that notices opens the next one.
type hotThread struct {
	mu sync.Mutex
	id string
}

func (h *hotThread) get() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.id
}

func (h *hotThread) replace(full, next string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.id == full {
		h.id = next
	}
}

// peakRSS reads a process's peak resident memory (VmHWM) in MiB; 0 when
// unknown.
func peakRSS(pid int) float64 {
	if pid <= 0 {
		return 0
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}

// cpuSeconds is the CPU time (user and system) a process has used so far,
// from /proc (0 when pid is unset or unknown). The machine is shared and
// noisy: a server's CPU time per operation moves much less with the load
// around it than its throughput does.
func cpuSeconds(pid int) float64 {
	if pid <= 0 {
		return 0
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: utime and stime are the 12th and 13th, in clock ticks.
	_, rest, ok := strings.Cut(string(raw), ") ")
	fields := strings.Fields(rest)
	if !ok || len(fields) < 13 {
		return 0
	}
	var utime, stime float64
	fmt.Sscan(fields[11], &utime)
	fmt.Sscan(fields[12], &stime)
	return (utime + stime) / 100 // USER_HZ is 100 on Linux
}
