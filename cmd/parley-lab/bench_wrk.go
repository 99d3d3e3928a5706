package main

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"parley/internal/cli"
	"parley/models"
	"parley/services"
)

// wrkScripts are the wrk scripts of posts over each binding (see the files).
//
//go:embed wrk/*.lua
var wrkScripts embed.FS

// wrkBindings are what bench wrk compares, in the order each round runs
// them: the JSON API first, the reference.
var wrkBindings = []string{"http", "mcp"}

// runBenchWrk measures posts over MCP against posts over the JSON API with
// wrk, a load generator that costs the machine little (parley-lab bench's
// own Go clients decode every answer on the same cores as the server and
// so dilute any difference between the bindings). It makes the tokens and
// the threads through the services, writes the scripts and the stage to a
// directory, and runs wrk over each binding in turn, --rounds times (in
// the opposite order every other round, each run after a VACUUM of what
// posts rewrite: see roundOrder and settle), printing posts/s, latency, the server's CPU per post and the load average
// beside each run, and MCP's ratio to HTTP in each round.
//
//	parley-lab bench wrk --url URL --db URL [--connections 16] [--duration 10s] [--rounds 3] [--server-pid PID]
func runBenchWrk(args []string) error {
	fs := cli.NewFlagSet("parley-lab bench wrk", "parley-lab bench wrk --url URL --db URL [--connections N] [--wrk-threads N] [--duration D] [--rounds N] [--warmup D] [--server-pid PID] [--dir DIR] [--json]")
	base := fs.String("url", "http://127.0.0.1:8080", "the running server's base `URL`")
	conns := fs.Int("connections", 16, "wrk's open `connections` (keep-alive, one request at a time each)")
	wrkThreads := fs.Int("wrk-threads", 2, "wrk's `threads`; each posts with its own share of the tokens")
	tokens := fs.Int("tokens", 16, "agents' `tokens` the posts are spread over")
	threads := fs.Int("threads", 2000, "`threads` the posts go into, each picked at random (the guard pauses a thread after guard_thread_run_max model messages)")
	duration := fs.Duration("duration", 10*time.Second, "how long each wrk run lasts")
	rounds := fs.Int("rounds", 3, "rounds of (HTTP, MCP), interleaved (the machine is noisy)")
	warmup := fs.Duration("warmup", 2*time.Second, "run each binding this long, unmeasured, before the first round")
	pid := fs.Int("server-pid", 0, "the server's `pid`, for its CPU time per post")
	dir := fs.String("dir", "", "write the scripts and the stage into this `directory` and keep them (default: a temporary one, removed)")
	wrkPath := fs.String("wrk", "wrk", "the wrk `command`")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	var cfg cli.Config
	cfg.DBFlag(fs)
	cfg.RealmFlag(fs)
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	if *conns < *wrkThreads || *tokens < 1 || *threads < 1 {
		return cli.Usagef("bench wrk: --connections must be at least --wrk-threads, --tokens and --threads at least 1")
	}
	ctx := context.Background()
	forum, closeDB, err := cfg.Forum(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	if *dir == "" {
		tmp, err := os.MkdirTemp("", "parley-wrk-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		*dir = tmp
	} else if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	stage, err := writeWrkStage(ctx, forum, *dir, *tokens, *threads)
	if err != nil {
		return fmt.Errorf("bench wrk: setting the stage: %w", err)
	}
	run := time.Now().UTC().Format("150405") // in every body: no run repeats another's
	w := wrkRunner{wrk: *wrkPath, dir: *dir, stage: stage, base: *base, conns: *conns, threads: *wrkThreads, pid: *pid}
	if *warmup > 0 {
		for _, b := range wrkBindings {
			if _, err := w.run(b, run+"w"+b, *warmup); err != nil {
				return err
			}
		}
	}
	var results []wrkResult
	for round := range max(1, *rounds) {
		for _, b := range roundOrder(round) {
			if err := settle(ctx, cfg.DB, postTables); err != nil {
				return err
			}
			r, err := w.run(b, fmt.Sprintf("%s.%d%s", run, round, b), *duration)
			if err != nil {
				return err
			}
			r.Round = round + 1
			results = append(results, r)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	printWrk(os.Stdout, results)
	return nil
}

// roundOrder is the order of the bindings in a round, turned around every
// other round: a run leaves the forum larger than it found it, and its
// threads' rows rewritten (below), so that the second run of a round
// pays for the first; alternating lets neither binding always pay.
func roundOrder(round int) []string {
	if round%2 == 0 {
		return wrkBindings
	}
	return []string{wrkBindings[1], wrkBindings[0]}
}

// settle vacuums, on PostgreSQL, what a run rewrites before the run
// (vacuum: VACUUM's options and tables), so that no run starts among the
// dead row versions of the one before it — this machine's cluster, like
// any with autovacuum off or behind, would leave them. postTables are
// those every post rewrites a row of: a post updates its thread's row,
// and that update cannot be HOT (activity_seq, which lists threads in
// order of activity, is indexed), so each one leaves a dead version and
// an index entry in every index of threads; eight seconds of posts into
// 2,000 threads left 30,000 of them, and PostgreSQL's CPU per post rose
// from 1.8 to 3.2 ms within 40 s until autovacuum came by. An SQLite forum
// is left as it is.
func settle(ctx context.Context, dbURL, vacuum string) error {
	if !models.IsPostgres(dbURL) {
		return nil
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("bench: vacuum: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "VACUUM "+vacuum); err != nil {
		return fmt.Errorf("bench: vacuum: %w", err)
	}
	return nil
}

// postTables are the tables a posts run rewrites (settle).
const postTables = "threads, rate_windows, tokens"

// writeWrkStage makes the tokens and the threads and writes them, one a
// line ("token SECRET", "thread ID"), to dir/stage.txt beside the scripts.
func writeWrkStage(ctx context.Context, forum *services.Forum, dir string, tokens, threads int) (string, error) {
	scripts, _ := wrkScripts.ReadDir("wrk")
	for _, e := range scripts {
		raw, _ := wrkScripts.ReadFile("wrk/" + e.Name())
		if err := os.WriteFile(filepath.Join(dir, e.Name()), raw, 0o644); err != nil {
			return "", err
		}
	}
	run := time.Now().UTC().Format("150405")
	var b strings.Builder
	for i := range tokens {
		tok, err := forum.CreateToken(ctx, services.TokenRequest{
			Handle: fmt.Sprintf("wrk-%s-%d", run, i), Rights: []services.Right{services.RightRead, services.RightWrite}})
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "token %s\n", tok.Secret)
	}
	seeder, err := benchCaller(ctx, forum, "wrk-"+run+"-seeder")
	if err != nil {
		return "", err
	}
	for i := range threads {
		raw, _ := json.Marshal(map[string]any{"kind": "ask", "body": fmt.Sprintf("wrk topic %s.%d: which option?", run, i)})
		p, err := forum.Post(ctx, seeder, raw)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "thread %s\n", p.Thread.ID)
	}
	path := filepath.Join(dir, "stage.txt")
	return path, os.WriteFile(path, []byte(b.String()), 0o600)
}

// wrkRunner runs wrk over one binding with the stage's tokens and threads.
type wrkRunner struct {
	wrk, dir, stage, base string
	conns, threads, pid   int
}

// wrkResult is one wrk run.
type wrkResult struct {
	Round      int     `json:"round"`
	Binding    string  `json:"binding"`
	Requests   int     `json:"requests"`
	Refused    int     `json:"refused"`
	Seconds    float64 `json:"seconds"`
	PerSecond  float64 `json:"per_second"` // posts answered as posted
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
	CPUMsPerOp float64 `json:"server_cpu_ms_per_post,omitempty"`
	Load       string  `json:"load_average"` // 1, 5 and 15 minutes, at the start
	Command    string  `json:"command"`
}

var wrkLine = regexp.MustCompile(`parley-wrk requests=(\d+) seconds=([0-9.]+) refused=(\d+) socket_errors=(\d+) p50_ms=([0-9.]+) p99_ms=([0-9.]+)`)

func (w wrkRunner) run(binding, tag string, d time.Duration) (wrkResult, error) {
	args := []string{"-t", strconv.Itoa(w.threads), "-c", strconv.Itoa(w.conns), "-d", fmt.Sprintf("%ds", max(1, int(d.Seconds()))),
		"-s", filepath.Join(w.dir, "post_"+binding+".lua"), w.base, "--", w.stage, tag, strconv.Itoa(w.threads)}
	r := wrkResult{Binding: binding, Load: loadAverage(), Command: w.wrk + " " + strings.Join(args, " ")}
	cpu := cpuSeconds(w.pid)
	out, err := exec.Command(w.wrk, args...).CombinedOutput()
	used := cpuSeconds(w.pid) - cpu
	if err != nil {
		return r, fmt.Errorf("%s: %v\n%s", r.Command, err, out)
	}
	m := wrkLine.FindSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("%s printed no result:\n%s", r.Command, out)
	}
	r.Requests, _ = strconv.Atoi(string(m[1]))
	r.Seconds, _ = strconv.ParseFloat(string(m[2]), 64)
	r.Refused, _ = strconv.Atoi(string(m[3]))
	socket, _ := strconv.Atoi(string(m[4]))
	r.P50Ms, _ = strconv.ParseFloat(string(m[5]), 64)
	r.P99Ms, _ = strconv.ParseFloat(string(m[6]), 64)
	posted := r.Requests - r.Refused
	if r.Seconds > 0 {
		r.PerSecond = float64(posted) / r.Seconds
	}
	if w.pid > 0 && r.Requests > 0 {
		r.CPUMsPerOp = used * 1000 / float64(r.Requests)
	}
	if r.Refused > 0 || socket > 0 {
		first := regexp.MustCompile(`parley-wrk first_refusal=.*`).Find(out)
		fmt.Fprintf(os.Stderr, "%s: %d refused, %d socket errors; %s\n", binding, r.Refused, socket, first)
	}
	return r, nil
}

// printWrk prints each run and, per round, MCP's posts/s over HTTP's.
func printWrk(out io.Writer, results []wrkResult) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\tbinding\tposts/s\tp50 ms\tp99 ms\trefused\tserver CPU ms/post\tload\tmcp÷http\t")
	var sum = map[string]float64{}
	perSecond := map[[2]any]float64{}
	for _, r := range results {
		perSecond[[2]any{r.Round, r.Binding}] = r.PerSecond
		sum[r.Binding] += r.PerSecond
		ratio := "" // on the round's second run, whichever binding it is
		if http, mcp := perSecond[[2]any{r.Round, "http"}], perSecond[[2]any{r.Round, "mcp"}]; http > 0 && mcp > 0 {
			ratio = fmt.Sprintf("%.2f", mcp/http)
		}
		fmt.Fprintf(tw, "%d\t%s\t%.0f\t%.2f\t%.2f\t%d\t%.3f\t%s\t%s\t\n", r.Round, r.Binding, r.PerSecond, r.P50Ms, r.P99Ms, r.Refused, r.CPUMsPerOp, r.Load, ratio)
	}
	tw.Flush()
	if sum["http"] > 0 {
		fmt.Fprintf(out, "mcp÷http over all rounds: %.2f\n", sum["mcp"]/sum["http"])
	}
	if len(results) > 0 {
		fmt.Fprintf(out, "wrk: %s\n", results[len(results)-1].Command)
	}
}
