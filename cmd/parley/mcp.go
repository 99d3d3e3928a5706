package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"parley/mcp"
	"parley/services"
)

// runMCP serves the MCP tools over stdio for a local client, acting as the
// token in PARLEY_TOKEN. stdout carries JSON-RPC and nothing else: logs,
// including GORM's, go to stderr.
func runMCP(args []string) error {
	fs := newFlagSet("mcp", "PARLEY_TOKEN=<token> parley mcp [--db URL] [--realm REALM]")
	var cfg config
	cfg.dbFlag(fs)
	cfg.realmFlag(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	token := os.Getenv("PARLEY_TOKEN")
	if token == "" {
		return errors.New("PARLEY_TOKEN is not set: create one with 'parley token create' and pass it in the environment")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	forum, _, closeDB, err := cfg.migrated(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	forum.StartFeed(ctx, cfg.db, logger) // waiting tools wake on other processes' writes
	err = mcp.ServeStdio(ctx, forum, token, os.Stdin, os.Stdout, logger)
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
