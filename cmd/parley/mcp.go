package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"parley/internal/cli"
	"parley/mcp"
	"parley/services"
)

// runMCP serves the MCP tools over stdio for a local client, acting as the
// token in PARLEY_TOKEN. stdout carries JSON-RPC and nothing else: logs,
// including GORM's, go to stderr.
func runMCP(args []string) error {
	fs := cli.NewFlagSet("parley mcp", "PARLEY_TOKEN=<token> parley mcp [--db URL] [--db-exec-mode MODE] [--db-listen-url URL] [--db-max-conns N] [--realm REALM] [--channel] [--posts-per-minute N] [--requests-per-minute N] [--verify-quorum N] [--guard-recent-bodies-party N] [--trust-key NAME=FILE]...")
	var cfg cli.Config
	cfg.DBFlag(fs)
	cfg.ListenFlag(fs)
	cfg.RealmFlag(fs)
	cfg.LimitFlags(fs) // as serve's, so that a stdio process enforces the limits the server publishes
	var logs cli.Logging
	logs.LogFlags(fs)
	cfg.TrustFlag(fs)
	cfg.WitnessFlags(fs)
	// One client per process, and every agent may run its own: a small
	// pool, so that fifty agents do not hold eight hundred connections.
	cfg.PoolFlag(fs, mcpMaxConns)
	channel := fs.Bool("channel", false, "declare Claude Code's experimental claude/channel capability and push a channel event into the session whenever a turn opens for this token's identity (research preview; see docs/mcp.md)")
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	token := os.Getenv("PARLEY_TOKEN")
	if token == "" {
		return errors.New("PARLEY_TOKEN is not set: create one with 'parley token create' and pass it in the environment")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := logs.Logger(os.Stderr)
	forum, _, closeDB, err := cfg.Migrated(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	// The instance's signing key (docs/protocol.md §15.5): generated on
	// first start, named in the manifest from then on. Not in Migrated:
	// import needs a database without one.
	if err := forum.EnsureInstanceKey(ctx); err != nil {
		return err
	}
	forum.StartFeed(ctx, cfg.ListenURL(), logger) // waiting tools wake on other processes' writes
	var opts []mcp.StdioOption
	if *channel {
		opts = append(opts, mcp.WithChannel())
	}
	err = mcp.ServeStdio(ctx, forum, token, os.Stdin, os.Stdout, logger, opts...)
	var refusal *services.Refusal
	switch {
	case errors.As(err, &refusal) && (refusal.Reason == services.TokenInvalid || refusal.Reason == services.TokenMissing):
		// Said before anything is served, so that a desktop client shows
		// why the server went away instead of a session that half works.
		return fmt.Errorf("PARLEY_TOKEN is not a valid token (unknown or revoked): create one with 'parley token create' and pass it in the environment")
	case err != nil && !errors.Is(err, context.Canceled):
		return err
	}
	return nil
}

// mcpMaxConns is parley mcp's pool size unless configured: a stdio process
// serves one client, a few calls at a time, and waiting calls hold no
// connection.
const mcpMaxConns = 4
