package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"parley/internal/cli"
	"parley/internal/heapfloor"
	"parley/mcp"
	"parley/models"
	"parley/oauth"
	"parley/services"
	"parley/web"
)

// defaultHeapFloor, in MiB, spares a server that answers posts (a live
// heap of about 4 MiB) four of five collections; see internal/heapfloor
// and docs/performance.md.
const defaultHeapFloor = 24

// shutdownGrace is how long in-flight requests get to finish on shutdown.
const shutdownGrace = 10 * time.Second

// runServe migrates the database, then serves HTTP until SIGINT or SIGTERM.
func runServe(args []string) error {
	fs := cli.NewFlagSet("parley serve", "parley [serve] [--addr ADDR] [--db URL] [--db-exec-mode MODE] [--db-listen-url URL] [--db-read-url URL]... [--db-read-max-lag D] [--realm REALM] [--max-conns N] [--db-max-conns N] [--heap-floor MIB] [--read-timeout D] [--request-timeout D] [--posts-per-minute N] [--requests-per-minute N] [--verify-quorum N] [--guard-recent-bodies-party N] [--deadline-sweep D] [--trusted-proxies CIDRS] [--metrics] [--metrics-allow CIDRS] [--metrics-token TOKEN] [--log-format text|json] [--log-level LEVEL] [--trust-key NAME=FILE]... [--oauth-issuer URL]")
	addr := fs.String("addr", "127.0.0.1:8080", "listen `address` (env PARLEY_ADDR)")
	maxConns := fs.Int("max-conns", web.DefaultMaxConns, "most concurrent `connections`; more are answered 503 (env PARLEY_MAX_CONNS; lowered to fit the open-file limit)")
	readTimeout := fs.Duration("read-timeout", web.DefaultReadTimeout, "longest `time` to receive one request (env PARLEY_READ_TIMEOUT)")
	heapFloor := fs.Uint64("heap-floor", defaultHeapFloor, "let the Go heap grow to this many `MiB` before a collection while what it holds live is small, and return to the system a heap past twice it once the server idles; 0 leaves the collector at GOGC's own setting, as GOGC or GOMEMLIMIT in the environment do (env PARLEY_HEAP_FLOOR)")
	pprofAddr := fs.String("pprof", "", "serve Go's profiler (net/http/pprof) on this loopback `address`, apart from the API (env PARLEY_PPROF)")
	requestTimeout := fs.Duration("request-timeout", web.DefaultRequestTimeout, "deadline of a request's work, database included; past it 503 (env PARLEY_REQUEST_TIMEOUT)")
	trustedProxies := fs.String("trusted-proxies", "", "reverse proxies whose X-Forwarded-For names the client (sign-in throttle): `addresses or CIDR ranges`, comma-separated; none by default (env PARLEY_TRUSTED_PROXIES)")
	sweep := fs.Duration("deadline-sweep", defaultSweep, "the least time between two deadline sweeps while the forum is written to; a known deadline is swept at its time (env PARLEY_DEADLINE_SWEEP)")
	metricsOn := fs.Bool("metrics", false, "serve Prometheus metrics at /metrics (env PARLEY_METRICS)")
	metricsAllow := fs.String("metrics-allow", "127.0.0.0/8,::1", "networks that may scrape /metrics without the token: `addresses or CIDR ranges`, comma-separated (env PARLEY_METRICS_ALLOW)")
	metricsToken := fs.String("metrics-token", "", "a bearer `token` that admits a scrape of /metrics from anywhere (env PARLEY_METRICS_TOKEN)")
	oauthIssuer := fs.String("oauth-issuer", "", "serve OAuth 2.1 for MCP clients, with /mcp/oauth, under this public base `URL` (https://host); none by default (env PARLEY_OAUTH_ISSUER)")
	oauthPrivate := fs.Bool("oauth-allow-private-client-metadata", false, "let OAuth client metadata documents be fetched from loopback and private addresses: tests and closed networks only (env PARLEY_OAUTH_ALLOW_PRIVATE_CLIENT_METADATA)")
	var logs cli.Logging
	logs.LogFlags(fs)
	var cfg cli.Config
	cfg.DBFlag(fs)
	cfg.RealmFlag(fs)
	cfg.TrustFlag(fs)
	cfg.PoolFlag(fs, models.DefaultMaxConns)
	cfg.ListenFlag(fs)
	cfg.ReadFlags(fs)
	cfg.LimitFlags(fs)
	cfg.WitnessFlags(fs)
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	trusted, err := web.ParseTrustedProxies(*trustedProxies)
	if err != nil {
		return cli.Usagef("--trusted-proxies: %v", err)
	}
	if *sweep <= 0 {
		return cli.Usagef("--deadline-sweep must be positive")
	}
	if *heapFloor > 1<<20 {
		return cli.Usagef("--heap-floor is in MiB: at most %d", 1<<20)
	}
	heapfloor.Floor(*heapFloor << 20)
	var scrape *web.MetricsOptions
	if *metricsOn {
		allow, err := web.ParseTrustedProxies(*metricsAllow)
		if err != nil {
			return cli.Usagef("--metrics-allow: %v", err)
		}
		scrape = &web.MetricsOptions{Allow: allow, Token: *metricsToken}
	}
	// The request lines go out in batches, at most 50 ms late; warnings and
	// errors at once (cli.BufferedLogger).
	logger, flushLog := logs.BufferedLogger(os.Stderr, 50*time.Millisecond)
	defer flushLog()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	forum, applied, closeDB, err := cfg.Migrated(ctx)
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
	if len(applied) > 0 {
		logger.Info("migrated", "database", cfg.DBKind(), "versions", applied)
	}
	forum.StartFeed(ctx, cfg.ListenURL(), logger)
	forum.StartReplicas(ctx, logger)
	if *pprofAddr != "" {
		if err := serveProfiler(*pprofAddr, logger); err != nil {
			return err
		}
	}
	// The sweep and the search seal stop before the database closes
	// (defers run last first).
	sweepCtx, stopSweep := context.WithCancel(ctx)
	swept, sealed := make(chan struct{}), make(chan struct{})
	go sweepDeadlines(sweepCtx, forum, *sweep, logger, swept)
	go sealSearch(sweepCtx, forum, logger, sealed)
	defer func() { stopSweep(); <-swept; <-sealed }()
	conns := fitConns(*maxConns, cfg.DBMaxConns)
	opts := web.Options{Logger: logger, MCP: mcp.HTTPHandler(forum, logger), MCPMaxBytes: mcp.MaxMessageBytes,
		MaxConns: conns, ReadTimeout: *readTimeout, RequestTimeout: *requestTimeout, TrustedProxies: trusted, Metrics: scrape}
	if *oauthIssuer != "" {
		opts.OAuth, err = oauth.New(ctx, forum, oauth.Options{Issuer: *oauthIssuer, AllowPrivateClientMetadata: *oauthPrivate, Logger: logger})
		if err != nil {
			return err
		}
		opts.MCPOAuth = mcp.OAuthHandler(forum, logger, opts.OAuth)
	}
	app, err := web.New(forum, opts)
	if err != nil {
		return err
	}

	// Listen before logging, so the log names the real address (also with
	// port 0) and a busy port fails here, before anything claims to serve.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	// Before serving too: it reads the database, and a database that fails
	// here fails the start, where once the process serves it would have
	// ended a server that is meant to ride out an outage (TestDatabaseOutage
	// saw one end so, the proxy taken down while the link was written).
	if err := printSetupLink(ctx, forum, ln.Addr().String()); err != nil {
		ln.Close()
		return err
	}
	// Logged before the first request can be served (the socket listens
	// already): a client that finds the server up finds this line written.
	logger.Info("listening", "addr", ln.Addr().String(), "database", cfg.DBKind(), "realm", forum.Realm(), "max_conns", conns, "metrics", *metricsOn)
	served := make(chan error, 1)
	go func() { served <- app.Listener(web.Steady(ln, logger)) }()
	if err := sdNotify("READY=1"); err != nil {
		logger.Warn("systemd notify", "err", err)
	}
	if every := watchdogInterval(); every > 0 {
		dogCtx, stopDog := context.WithCancel(ctx)
		defer stopDog()
		go watchdog(dogCtx, forum, every, logger)
	}
	if c := forum.Connection(); c.ExecMode != "" {
		logger.Info("postgres", "exec_mode", c.ExecMode, "pooler", c.Pooled, "listen", cfg.ListenURL() != cfg.DB)
	}

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	stop() // from here a second signal kills at once
	logger.Info("shutting down")
	if err := sdNotify("STOPPING=1"); err != nil {
		logger.Warn("systemd notify", "err", err)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := app.ShutdownWithContext(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	logger.Info("stopped")
	return nil
}

// printSetupLink prints, while no human account exists, the one-time link
// that creates the first one. It goes to stderr as a plain line, not into
// the structured log, since it is a secret meant for the operator's eyes.
func printSetupLink(ctx context.Context, forum *services.Forum, addr string) error {
	token, err := forum.SetupLink(ctx)
	if err != nil || token == "" {
		return err
	}
	fmt.Fprintf(os.Stderr, "\nNo human account yet. Open this one-time link to create the first:\n\n    http://%s/setup/%s\n\n", addr, token)
	return nil
}
