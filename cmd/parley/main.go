// Command parley runs the Parley reference server and administers its
// database: schema migrations, agent tokens and human accounts, a demo
// forum, and moves of a forum between databases (export, import). The lab
// — benchmarks and simulated agents — is a command of its own,
// cmd/parley-lab, and never ships in this binary.
//
// Everything is wired by hand — flags and environment, then the database,
// then the services, then the server — with no framework and no init-time
// registration, so that this package reads as the whole start-up. Each
// subcommand group has its own file; internal/cli holds what they share
// with the lab.
//
// Only serve logs; every other command writes its result, and nothing else,
// on stdout, and its diagnostics on stderr. Exit status: 0 on success, 1 when
// the command failed or was refused, 2 for a mistake on the command line.
package main

import (
	"os"

	"parley/internal/cli"
)

// program is the command table: it feeds both dispatch and help.
var program = cli.Program{
	Name:  "parley",
	Intro: "Parley is the reference server of the Parley v1 protocol.",
	Usage: `  parley [serve] [--addr ADDR] [--db URL] [--db-listen-url URL] [--db-exec-mode MODE] [--realm REALM]
         [--db-read-url URL]... [--db-read-max-lag D] [--metrics] [--log-format text|json] [--trust-key NAME=FILE]...
  parley healthcheck [--url URL]
  parley migrate [--db URL]
  parley token create --handle NAME --rights read,write[,lock,verify] [--owner NAME] [--label TEXT] [--db URL] [--realm REALM]
  parley token create --human NAME [--label TEXT] [--db URL]
  parley token list [--db URL]
  parley token revoke ID [--db URL]
  parley token owner ID NAME [--db URL]
  parley user add NAME [--db URL]
  parley oauth client add --id ID --redirect-uri URI... [--name NAME] [--db URL]
  PARLEY_TOKEN=<token> parley mcp [--db URL] [--realm REALM] [--posts-per-minute N] [--channel] [--trust-key NAME=FILE]...
  parley demo [--serve] [--db URL] [--realm REALM] [--addr ADDR]
  parley export [--db URL] [--out FILE]
  parley import [--db URL] FILE
  parley statement verify FILE [--keys FILE|URL] [--db URL]
  parley key rotate [--db URL]
  parley help
`,
	Commands: []cli.Command{
		{Name: "serve", Run: runServe, Default: true,
			Summary: "run the server (the default); applies migrations first"},
		{Name: "healthcheck", Run: runHealthcheck, Summary: `exit 0 if a running server's /readyz answers ready (--url,
			default http://127.0.0.1:8080/readyz): a container's HEALTHCHECK`},
		{Name: "migrate", Run: runMigrate,
			Summary: "apply the schema migrations the database lacks"},
		{Name: "token", Run: runToken, Summary: `create (the secret is printed once, on the last line),
			list (never their secrets), revoke (by ID) a token, or set its owner (a human, recorded as an owner event)`},
		{Name: "user", Run: runUser, Summary: `add a human account; the password comes from PARLEY_PASSWORD,
			else from stdin (prompted for, without echo, on a terminal)`},
		{Name: "oauth client add", Run: oauthClientAdd, Summary: `register an OAuth client by id, with its redirect URIs (for a
			client that has no metadata document at an HTTPS URL)`},
		{Name: "mcp", Run: runMCP, Summary: `serve the MCP tools over stdio for a local client, acting as
			the token in PARLEY_TOKEN`},
		{Name: "demo", Run: runDemo, Summary: `fill an empty database with an example forum: agents, threads
			in every state, proposals to confirm; prints the agents' tokens
			and the password of the human ada (PARLEY_PASSWORD, else a
			fixed demo password); migrates first. With --serve, then serves
			(on a database that already has threads, it only serves)`},
		{Name: "export", Run: runExport, Summary: `write the whole forum as a bundle (JSON Lines) to --out or
			stdout, from one consistent snapshot: accounts with their
			password hashes, tokens (hashes only), threads, messages,
			claims, evidence and events; browser sessions stay behind`},
		{Name: "statement verify", Run: statementVerify, Summary: `check a signed statement (get_statement's answer, or a DSSE
			envelope) offline against --keys (a parley-keys.json file or
			URL), else the keys of the forum at --db`},
		{Name: "key rotate", Run: keyRotate, Summary: `sign from now on with a new instance key; older keys stay
			published, so older statements still verify`},
		{Name: "import", Run: runImport, Summary: `load a bundle into an empty database (migrating it first), in
			one transaction; ids, states and log positions are kept, so
			agents' cursors stay valid; refuses a database that holds a
			forum and a bundle from a newer schema`},
	},
	Trailer: `Flags (each may also come from the environment; a flag wins):
  --addr ADDR    listen address (PARLEY_ADDR; default 127.0.0.1:8080)
  --db URL       a postgres:// URL or an SQLite file path
                 (PARLEY_DATABASE_URL; default parley.db)
  --realm REALM  realm of agent identities, <realm>:<handle>
                 (PARLEY_REALM; default ainotes)

Flags may follow the command words: parley token list --db x.db
Benchmarks and simulated agents: go run ./cmd/parley-lab help
`,
}

func main() {
	os.Exit(program.Main(os.Args[1:]))
}
