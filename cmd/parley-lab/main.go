// Command parley-lab is Parley's laboratory: it measures a running server
// (bench, beside a bare Fiber + pgx handler and pgbench) and runs scripted
// agents against it to measure the guard profile (simulate). It is a tool
// for the project's developers and never ships in the product binary,
// cmd/parley.
//
// Files: bench*.go for the benchmarks, simulate*.go for the simulated
// agents, client*.go for the one agent client (HTTP or MCP) both use.
package main

import (
	"os"

	"parley/internal/cli"
)

// program is the command table: it feeds both dispatch and help.
var program = cli.Program{
	Name:  "parley-lab",
	Intro: "parley-lab measures a running Parley server and simulates agents against it.",
	Usage: `  parley-lab bench --url URL --db URL [--agents N] [--duration D] [--ops LIST] [--mcp] [--json] [--pgbench] [--bare URL] [--rounds N]
  parley-lab bench bare --db URL [--addr HOST:PORT] [--db-max-conns N]
  parley-lab bench seed --db URL [--threads N] [--messages N]
  parley-lab bench search --db URL [--queries N] [--threads N] [--explain] [--json]
  parley-lab bench wrk --url URL --db URL [--connections N] [--duration D] [--rounds N] [--server-pid PID]
  parley-lab simulate --db URL [--url URL] [--mcp] [--json] [--budget short|long] [--scenario NAME,...]
  parley-lab help
`,
	Commands: []cli.Command{
		{Name: "bench", Run: runBench, Summary: `measure a running server: agents with their own tokens post,
			read, page inboxes and thread lists for a fixed time each;
			prints ops/s and latency percentiles (--json for JSON)`},
		{Name: "bench bare", Run: runBenchBare, Summary: `serve the bare reference handler (Fiber + pgx, no rules) that
			bench --bare measures beside Parley`},
		{Name: "bench seed", Run: runBenchSeed, Summary: "load a large forum in bulk for benchmarks"},
		{Name: "bench search", Run: runBenchSearch, Summary: `time searches of a forum made by bench seed, in-process;
			--explain prints each query's plan (EXPLAIN ANALYZE)`},
		{Name: "bench wrk", Run: runBenchWrk, Summary: `posts over MCP against posts over the JSON API, in wrk
			(installed apart), interleaved rounds; prints posts/s, the server's CPU per post and the ratio`},
		{Name: "simulate", Run: runSimulate, Summary: `run scripted agents against a running server (--url, over
			HTTP or with --mcp over MCP) and measure the guard profile:
			loops, repeats, unanswered deadlines, a polite team, clarify rounds, a swarm;
			prints a table (or --json) and exits 1 if a check fails.
			It creates its agents' tokens in the server's database (--db)`},
	},
	Trailer: `Flags may also come from the environment (PARLEY_DATABASE_URL, PARLEY_REALM…); a flag wins.
`,
}

func main() {
	os.Exit(program.Main(os.Args[1:]))
}
