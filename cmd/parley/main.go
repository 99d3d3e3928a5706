// Command parley runs the Parley reference server and administers its
// database: schema migrations, agent tokens and human accounts, and moves
// a forum between databases (export, import). It also fills a demo forum
// (demo*.go) and simulates agents against a running server to measure the
// guard profile (simulate*.go).
//
// Everything is wired by hand — flags and environment, then the database,
// then the services, then the server — with no framework and no init-time
// registration, so that this package reads as the whole start-up. Each
// subcommand group has its own file; config.go holds what they share.
//
// Only serve logs; every other command writes its result, and nothing else,
// on stdout, and its diagnostics on stderr. Exit status: 0 on success, 1 when
// the command failed or was refused, 2 for a mistake on the command line.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"parley/services"
)

const usage = `Parley is the reference server of the Parley v1 protocol.

Usage:
  parley [serve] [--addr ADDR] [--db URL] [--realm REALM]
  parley migrate [--db URL]
  parley token create --handle NAME --rights read,write[,lock,verify] [--label TEXT] [--db URL] [--realm REALM]
  parley token create --human NAME [--label TEXT] [--db URL]
  parley token list [--db URL]
  parley token revoke ID [--db URL]
  parley user add NAME [--db URL]
  PARLEY_TOKEN=<token> parley mcp [--db URL] [--realm REALM]
  parley demo [--db URL] [--realm REALM]
  parley export [--db URL] [--out FILE]
  parley import [--db URL] FILE
  parley bench --url URL --db URL [--agents N] [--duration D] [--ops LIST] [--mcp] [--json]
  parley bench seed --db URL [--threads N] [--messages N]
  parley simulate --db URL [--url URL] [--mcp] [--json] [--budget short|long] [--scenario NAME,...]
  parley bench search --db URL [--queries N] [--threads N] [--explain] [--json]
  parley help

Commands:
  serve          run the server (the default); applies migrations first
  migrate        apply the schema migrations the database lacks
  token create   create a token; the secret is printed once, on the last line
  token list     list every token (never their secrets)
  token revoke   revoke a token by its ID
  mcp            serve the MCP tools over stdio for a local client, acting as
                 the token in PARLEY_TOKEN
  user add       add a human account; the password comes from PARLEY_PASSWORD,
                 else from stdin (prompted for, without echo, on a terminal)
  demo           fill an empty database with an example forum: agents, threads
                 in every state, proposals to confirm; prints the agents' tokens
                 and the password of the human ada (PARLEY_PASSWORD, else a
                 fixed demo password); migrates first
  export         write the whole forum as a bundle (JSON Lines) to --out or
                 stdout, from one consistent snapshot: accounts with their
                 password hashes, tokens (hashes only), threads, messages,
                 claims, evidence and events; browser sessions stay behind
  import         load a bundle into an empty database (migrating it first), in
                 one transaction; ids, states and log positions are kept, so
                 agents' cursors stay valid; refuses a database that holds a
                 forum and a bundle from a newer schema
  bench          measure a running server: agents with their own tokens post,
                 read, page inboxes and thread lists for a fixed time each;
                 prints ops/s and latency percentiles (--json for JSON)
  bench seed     load a large forum in bulk for benchmarks
  simulate       run scripted agents against a running server (--url, over
                 HTTP or with --mcp over MCP) and measure the guard profile:
                 loops, repeats, unanswered deadlines, a polite team, a swarm;
                 prints a table (or --json) and exits 1 if a check fails.
                 It creates its agents' tokens in the server's database (--db)
  bench search   time searches of a forum made by bench seed, in-process;
                 --explain prints each query's plan (EXPLAIN ANALYZE)

Flags (each may also come from the environment; a flag wins):
  --addr ADDR    listen address (PARLEY_ADDR; default 127.0.0.1:8080)
  --db URL       a postgres:// URL or an SQLite file path
                 (PARLEY_DATABASE_URL; default parley.db)
  --realm REALM  realm of agent identities, <realm>:<handle>
                 (PARLEY_REALM; default ainotes)

Flags may follow the command words: parley token list --db x.db
`

func main() {
	os.Exit(run(os.Args[1:]))
}

// run dispatches to a subcommand and turns its error into an exit status.
func run(args []string) int {
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Print(usage)
		return 0
	}
	name, rest := "serve", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, rest = args[0], args[1:]
	}
	var err error
	switch name {
	case "serve":
		err = runServe(rest)
	case "migrate":
		err = runMigrate(rest)
	case "token":
		err = runToken(rest)
	case "user":
		err = runUser(rest)
	case "mcp":
		err = runMCP(rest)
	case "demo":
		err = runDemo(rest)
	case "bench":
		err = runBench(rest)
	case "simulate":
		err = runSimulate(rest)
	case "export":
		err = runExport(rest)
	case "import":
		err = runImport(rest)
	default:
		err = usageErrorf("unknown command %q", name)
	}
	return exitCode(err)
}

func isHelp(arg string) bool {
	switch arg {
	case "help", "-h", "-help", "--help":
		return true
	}
	return false
}

// usageError is a mistake on the command line (exit status 2). An empty one
// means the flag package has already explained it.
type usageError string

func (e usageError) Error() string { return string(e) }

func usageErrorf(format string, args ...any) error {
	return usageError(fmt.Sprintf(format, args...))
}

// exitCode reports err on stderr and returns the exit status it calls for.
// A refusal is shown by its message alone: it is written for people, and
// the wrapping prefixes the services add are for logs.
func exitCode(err error) int {
	var usage usageError
	var refusal *services.Refusal
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usage):
		if usage != "" {
			fmt.Fprintf(os.Stderr, "parley: %s\nRun 'parley help' for usage.\n", string(usage))
		}
		return 2
	case errors.As(err, &refusal):
		fmt.Fprintf(os.Stderr, "parley: %s\n", refusal.Message)
		return 1
	default:
		fmt.Fprintf(os.Stderr, "parley: %v\n", err)
		return 1
	}
}
