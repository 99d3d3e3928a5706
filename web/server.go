package web

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/valyala/fasthttp"

	"parley/internal/faultlog"
	"parley/oauth"
	"parley/services"
)

// Options configures the application.
type Options struct {
	Logger *slog.Logger // request and error log; slog.Default() when nil
	MCP    http.Handler // the MCP Streamable HTTP endpoint, served at /mcp
	// OAuth, when set, is the authorization server (package oauth) and
	// MCPOAuth the MCP endpoint it protects, served at /mcp/oauth
	// (web/oauth_routes.go); both nil serve neither.
	OAuth    *oauth.Server
	MCPOAuth http.Handler

	// Timeouts. Zero values take the defaults below. ReadTimeout bounds
	// reading one request, headers and body: a client that sends half a
	// request is cut off. WriteTimeout bounds writing the answer,
	// IdleTimeout a keep-alive connection waiting for its next request,
	// and RequestTimeout the deadline of the work a request does (database
	// included), so a frozen database answers 503 instead of hanging.
	ReadTimeout, WriteTimeout, IdleTimeout, RequestTimeout time.Duration
	// MaxConns caps concurrent connections; beyond it a connection is
	// answered 503 at once and closed. Zero means DefaultMaxConns.
	MaxConns int
	// MCPMaxBytes is the most /mcp reads of one request; zero means
	// DefaultMCPMaxBytes. Every other route reads request_max_bytes.
	MCPMaxBytes int
	// TrustedProxies are the reverse proxies (addresses and CIDR ranges)
	// whose X-Forwarded-For names the client (see clientIP); none by
	// default, and then the client is the direct peer.
	TrustedProxies []netip.Prefix
	// Metrics, if set, serves /metrics (web/metrics.go) to the networks
	// and the token it names; nil serves no /metrics.
	Metrics *MetricsOptions
}

// The defaults of Options.
const (
	DefaultReadTimeout    = 10 * time.Second
	DefaultWriteTimeout   = 15 * time.Second
	DefaultIdleTimeout    = 60 * time.Second
	DefaultRequestTimeout = 5 * time.Second
	DefaultMaxConns       = 10000
)

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&o.ReadTimeout, DefaultReadTimeout}, {&o.WriteTimeout, DefaultWriteTimeout}, {&o.IdleTimeout, DefaultIdleTimeout}, {&o.RequestTimeout, DefaultRequestTimeout}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.MCPMaxBytes <= 0 {
		o.MCPMaxBytes = DefaultMCPMaxBytes
	}
}

// server holds what the handlers share: the services and the logger.
type server struct {
	forum   *services.Forum
	log     *slog.Logger
	openapi []byte        // the OpenAPI document; it depends only on the code
	mcp     http.Handler  // nil: no /mcp route
	oauth   *oauth.Server // nil: no OAuth (web/oauth_routes.go)
	mcpAuth http.Handler  // /mcp/oauth, with oauth
	mcpMax  int           // the most /mcp reads of one request
	timeout time.Duration
	trusted []netip.Prefix // see Options.TrustedProxies
	metrics *metrics       // counted always, served when Options.Metrics is set
	scrape  *MetricsOptions

	// For the waiting inbox calls parked off their goroutines (inbox_parked.go).
	srv            *fasthttp.Server
	parked         *parkedCalls
	idle           *idleConns    // their connections between requests (inbox_idle.go)
	late           *lateLines    // the parked calls' log lines (late_lines.go)
	faults         *faultlog.Log // the errors behind 500 and 503 answers
	requestTimeout time.Duration
	waitMax        time.Duration
	writeTimeout   time.Duration
	idleTimeout    time.Duration
	maxConns       int
}

// New builds the Fiber application serving forum.
func New(forum *services.Forum, opts Options) (*fiber.App, error) {
	doc, err := openAPIDocument(forum)
	if err != nil {
		return nil, fmt.Errorf("web: openapi document: %w", err)
	}
	if opts.MCPMaxBytes <= 0 {
		opts.MCPMaxBytes = mcpMaxFor(forum.Limits())
	}
	opts.defaults()
	// /mcp carries its tools' waits inside the JSON-RPC body: its deadline
	// allows the longest wait; mcp bounds the tools that do not wait.
	mcpTimeout := opts.RequestTimeout + time.Duration(forum.Limits().WaitMaxSeconds)*time.Second
	s := &server{forum: forum, log: opts.Logger, openapi: doc, mcp: opts.MCP, oauth: opts.OAuth, mcpAuth: opts.MCPOAuth, mcpMax: opts.MCPMaxBytes, timeout: mcpTimeout, trusted: opts.TrustedProxies,
		metrics: newMetrics(forum), scrape: opts.Metrics,
		parked: &parkedCalls{}, idle: &idleConns{}, requestTimeout: opts.RequestTimeout, waitMax: time.Duration(forum.Limits().WaitMaxSeconds) * time.Second,
		writeTimeout: opts.WriteTimeout, idleTimeout: opts.IdleTimeout, maxConns: opts.MaxConns}
	cfg := fiber.Config{
		AppName:               "parley",
		DisableStartupMessage: true,
		ErrorHandler:          s.handleError,
		// Larger bodies are refused from their Content-Length, unread.
		BodyLimit:    forum.Limits().RequestMaxBytes,
		ReadTimeout:  opts.ReadTimeout,
		WriteTimeout: opts.WriteTimeout,
		IdleTimeout:  opts.IdleTimeout,
		Concurrency:  opts.MaxConns,
		// A connection gives its read and write buffers (4 KiB each) back
		// to their pools between requests, and its read buffer while its
		// handler runs: a waiting call holds neither (issue 31).
		ReduceMemoryUsage: true,
	}
	proxyConfig(&cfg, opts.TrustedProxies)
	app := fiber.New(cfg)
	s.srv = app.Server()
	s.srv.KeepHijackedConns = true // parked calls' connections (inbox_parked.go)
	s.srv.MaxIdleWorkerDuration = idleWorkers
	s.late = newLateLines(s)
	s.faults = faultlog.New(s.log)
	app.Hooks().OnShutdown(func() error { s.parked.stop(parkedGrace); s.idle.closeAll(); s.late.flush(); return nil })
	s.refuseUnknownMethods(app)
	s.limitBodies(app, opts.MCPMaxBytes, forum.Limits().BlobMaxBytes)
	app.Use(secureHeaders)
	app.Use(deadline(opts.RequestTimeout, time.Duration(forum.Limits().WaitMaxSeconds)*time.Second))
	app.Use(endWaitWhenGone)
	app.Use(s.assignRequestID)
	app.Use(s.logRequests)
	app.Use(recover.New())
	s.routes(app)
	s.metrics.learnRoutes(app)
	return app, nil
}

// withDeadline is deadline for a net/http handler: the Fiber adaptor gives
// it a context of its own, not the request's user context.
func withDeadline(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// deadline gives every request's work a deadline: services and the
// database driver stop waiting when it passes, and the request is answered
// 503 unavailable. A waiting read (?wait=N, docs/protocol.md §13) gets its wait on
// top, up to waitMax; the services bound each of its database rounds by
// themselves.
func deadline(d, waitMax time.Duration) fiber.Handler {
	return func(c *fiber.Ctx) error {
		w := 0
		if q := c.Query("wait"); q != "" {
			w, _ = strconv.Atoi(q)
		}
		ctx, cancel := context.WithTimeout(c.UserContext(), waitBudget(d, waitMax, w))
		defer cancel()
		c.SetUserContext(ctx)
		return c.Next()
	}
}

// waitBudget is the deadline of a request that waits wait seconds (none
// when wait <= 0), at most waitMax.
func waitBudget(d, waitMax time.Duration, wait int) time.Duration {
	if wait > 0 {
		d += min(time.Duration(wait)*time.Second, waitMax)
	}
	return d
}

// idleWorkers is how long fasthttp keeps a connection worker (a goroutine)
// that has nothing to serve; it drops those idle longer at this interval.
// Its default, 10 s, kept the workers of a burst of waiting calls — which
// each let go of theirs when parked — for up to 20 s: as many goroutines
// as calls, with the stacks they had grown.
const idleWorkers = time.Second

// parkedGrace bounds how long a shutdown waits for the parked calls'
// answers to be written.
const parkedGrace = 5 * time.Second

// refuseUnknownMethods answers a request whose method Fiber does not know
// with the refusal object. Fiber itself would answer it as plain text,
// before any middleware or error handler runs.
func (s *server) refuseUnknownMethods(app *fiber.App) {
	srv := app.Server()
	next := srv.Handler
	srv.Handler = func(fctx *fasthttp.RequestCtx) {
		if !slices.Contains(fiber.DefaultMethods, string(fctx.Method())) {
			body, _ := json.Marshal(services.RefusalBody{Error: noOperation().(*services.Refusal)})
			if isMCPPath(string(fctx.Path())) {
				// The MCP transport answers in JSON-RPC, this too.
				body, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil,
					"error": map[string]any{"code": -32600, "message": "POST each JSON-RPC message to this address"}})
				fctx.Response.Header.Set(fiber.HeaderAllow, fiber.MethodPost)
				fctx.SetStatusCode(fiber.StatusMethodNotAllowed)
				fctx.SetContentType(fiber.MIMEApplicationJSON)
				fctx.SetBody(body)
				return
			}
			fctx.SetStatusCode(fiber.StatusBadRequest)
			fctx.SetContentType(fiber.MIMEApplicationJSON)
			fctx.SetBody(body)
			return
		}
		next(fctx)
	}
}
