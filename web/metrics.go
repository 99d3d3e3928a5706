package web

import (
	"context"
	"crypto/subtle"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"parley/services"
)

// MetricsOptions turns on /metrics (Options.Metrics).
type MetricsOptions struct {
	// Allow are the networks whose clients may scrape without a token
	// (clientIP, so a trusted proxy's client is judged, not the proxy).
	Allow []netip.Prefix
	// Token, if set, admits a scrape from anywhere that sends it as
	// "Authorization: Bearer <token>".
	Token string
}

// DefaultMetricsAllow is --metrics-allow's default: loopback only.
var DefaultMetricsAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// The bindings, a label of the request series: the JSON API, the MCP
// tools (over /mcp), and the web pages.
const (
	bindingHTTP = "http"
	bindingMCP  = "mcp"
	bindingWeb  = "web"
)

// gaugesTTL is how long the database's counts are kept between scrapes:
// several Prometheus servers, or a scrape retried, cost one round.
const gaugesTTL = 10 * time.Second

// metrics are the Prometheus series of one server. Every label is from a
// closed set: a binding, an operation of services.Operations or a route
// of the route table ("other" for anything else), a refusal reason, a
// message kind, an author kind, a claim status. No identity, token, path
// parameter or text is ever a label.
//
// Reading: the counts of what is stored (posts, claims, escalations,
// overdue asks, open calls) are read from the database at scrape time, so
// that every server behind a load balancer reports the same totals and a
// restart loses nothing; per-process series (requests, refusals, latency,
// the pool, the feed) are this process's own, to be summed across servers.
type metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	refusals    *prometheus.CounterVec
	guard       *prometheus.CounterVec
	rateLimited *prometheus.CounterVec
	ops         map[string]string // "GET /api/v1/threads/:thread" → operation name
	routes      map[string]bool   // the route table's "METHOD path", for the web binding
}

func newMetrics(forum *services.Forum) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), ops: map[string]string{}, routes: map[string]bool{}}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parley_requests_total",
		Help: "Requests answered, by binding (http, mcp, web), operation and status code class (2xx, 4xx, 5xx)."},
		[]string{"binding", "operation", "code"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "parley_request_duration_seconds",
		Help:    "Time to answer a request, by binding and operation (waiting reads included: see the operation).",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}},
		[]string{"binding", "operation"})
	m.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parley_refusals_total",
		Help: "Requests refused, by binding and refusal reason (docs/protocol.md §2.2)."}, []string{"binding", "reason"})
	m.guard = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parley_guard_refusals_total",
		Help: "Posts refused by the loop guard, by rule (its refusal reason: loop_suspected, duplicate_body)."}, []string{"rule"})
	m.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parley_rate_limit_hits_total",
		Help: "Requests refused rate_limited, by binding."}, []string{"binding"})
	m.reg.MustRegister(m.requests, m.duration, m.refusals, m.guard, m.rateLimited,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&stateCollector{forum: forum})
	for _, op := range services.Operations {
		path := op.Path
		for strings.Contains(path, "{") {
			i, j := strings.Index(path, "{"), strings.Index(path, "}")
			path = path[:i] + ":" + path[i+1:j] + path[j+1:]
		}
		m.ops[op.Method+" "+path] = string(op.Name)
	}
	return m
}

// learnRoutes records the route table, the web binding's operations.
func (m *metrics) learnRoutes(app *fiber.App) {
	for _, r := range app.GetRoutes(true) {
		m.routes[r.Method+" "+r.Path] = true
	}
}

// label names a request's binding and operation from its route.
func (m *metrics) label(c *fiber.Ctx) (binding, operation string) {
	route := c.Method() + " " + c.Route().Path
	switch {
	case isMCP(c):
		return bindingMCP, "transport"
	case strings.HasPrefix(c.Path(), "/api/") || c.Path() == "/.well-known/parley.json":
		if op, ok := m.ops[route]; ok {
			return bindingHTTP, op
		}
		if c.Path() == "/.well-known/parley.json" {
			return bindingHTTP, string(services.OpGetManifest)
		}
		return bindingHTTP, "other"
	case m.routes[route] && c.Route().Path != "/":
		return bindingWeb, route
	}
	return bindingWeb, "other"
}

// observe counts one answered request, or one MCP tool call (binding
// mcp, its operation), with its refusal if it was refused.
func (m *metrics) observe(binding, operation string, status int, d time.Duration, r *services.Refusal) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(binding, operation, codeClass(status)).Inc()
	m.duration.WithLabelValues(binding, operation).Observe(d.Seconds())
	if r == nil {
		return
	}
	m.refusals.WithLabelValues(binding, string(r.Reason)).Inc()
	switch r.Reason {
	case services.LoopSuspected, services.DuplicateBody:
		m.guard.WithLabelValues(string(r.Reason)).Inc()
	case services.RateLimited:
		m.rateLimited.WithLabelValues(binding).Inc()
	}
}

func codeClass(status int) string {
	switch {
	case status >= 500:
		return "5xx"
	case status >= 400:
		return "4xx"
	case status >= 300:
		return "3xx"
	}
	return "2xx"
}

// serveMetrics answers /metrics to an allowed network or the token;
// anyone else is told there is nothing here (404, as for an unknown page:
// the endpoint's existence is not advertised).
func (s *server) serveMetrics(opts MetricsOptions) fiber.Handler {
	h := adaptor.HTTPHandler(promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	return func(c *fiber.Ctx) error {
		if !s.metricsAllowed(c, opts) {
			c.Set(fiber.HeaderCacheControl, "no-store")
			return c.Status(fiber.StatusForbidden).SendString("forbidden\n")
		}
		return h(c)
	}
}

// metricsAllowed: the client's address in an allowed network, or the
// token, compared in constant time.
func (s *server) metricsAllowed(c *fiber.Ctx, opts MetricsOptions) bool {
	if opts.Token != "" {
		if got := bearer(c); got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(opts.Token)) == 1 {
			return true
		}
	}
	a, err := netip.ParseAddr(s.clientIP(c))
	if err != nil {
		return false
	}
	for _, p := range opts.Allow {
		if p.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}

// stateCollector reads, at scrape time, what the database holds (through
// services.Forum.Gauges, cached gaugesTTL) and this process's pool and
// feed.
type stateCollector struct {
	forum *services.Forum
	mu    sync.Mutex
	at    time.Time
	last  services.Gauges
	err   error
}

var (
	descPosts       = prometheus.NewDesc("parley_posts", "Messages stored, by kind and author kind (llm, human): a total over the database; rate() it as a counter.", []string{"kind", "author_kind"}, nil)
	descClaims      = prometheus.NewDesc("parley_claims", "Claims, by status.", []string{"status"}, nil)
	descEscalations = prometheus.NewDesc("parley_escalations", "Asks escalated past their reply_by, ever (a total over the database).", nil, nil)
	descOverdue     = prometheus.NewDesc("parley_overdue_asks", "Escalated threads whose turn is still open.", nil, nil)
	descOpen        = prometheus.NewDesc("parley_open_calls", "Long-lived calls holding a slot, over the database, by kind: stream (event streams), wait (waiting reads), live (pages' /live).", []string{"kind"}, nil)
	descGaugesUp    = prometheus.NewDesc("parley_database_counts_up", "1 if the counts above were read from the database, 0 if the last read failed.", nil, nil)
	descPoolMax     = prometheus.NewDesc("parley_db_pool_max_connections", "The database pool's size.", nil, nil)
	descPoolInUse   = prometheus.NewDesc("parley_db_pool_in_use", "Database connections in use.", nil, nil)
	descPoolIdle    = prometheus.NewDesc("parley_db_pool_idle", "Database connections idle.", nil, nil)
	descPoolWaits   = prometheus.NewDesc("parley_db_pool_waits_total", "Times a query waited for a free connection.", nil, nil)
	descPoolWaited  = prometheus.NewDesc("parley_db_pool_wait_seconds_total", "Time spent waiting for a free connection.", nil, nil)
	descFeedOn      = prometheus.NewDesc("parley_feed_listen", "1 if this process LISTENs for other processes' writes (PostgreSQL).", nil, nil)
	descFeedDeg     = prometheus.NewDesc("parley_feed_degraded", "1 if the LISTEN connection is down or deaf, so waiting reads poll (see /readyz).", nil, nil)
	descFeedLag     = prometheus.NewDesc("parley_feed_roundtrip_seconds", "The listener's last self-check: NOTIFY through the pool until the listener heard it, the lag from a commit to a waiter's wake-up (checked once a minute).", nil, nil)
)

func (s *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPosts, descClaims, descEscalations, descOverdue, descOpen, descGaugesUp,
		descPoolMax, descPoolInUse, descPoolIdle, descPoolWaits, descPoolWaited, descFeedOn, descFeedDeg, descFeedLag} {
		ch <- d
	}
}

func (s *stateCollector) Collect(ch chan<- prometheus.Metric) {
	g, err := s.gauges()
	up := 1.0
	if err != nil {
		up = 0
	} else {
		for k, n := range g.Posts {
			ch <- prometheus.MustNewConstMetric(descPosts, prometheus.GaugeValue, float64(n), k[0], k[1])
		}
		for status, n := range g.Claims {
			ch <- prometheus.MustNewConstMetric(descClaims, prometheus.GaugeValue, float64(n), status)
		}
		ch <- prometheus.MustNewConstMetric(descEscalations, prometheus.GaugeValue, float64(g.Escalations))
		ch <- prometheus.MustNewConstMetric(descOverdue, prometheus.GaugeValue, float64(g.Overdue))
		for _, kind := range []string{"stream", "wait", "live"} {
			ch <- prometheus.MustNewConstMetric(descOpen, prometheus.GaugeValue, float64(g.Open[kind]), kind)
		}
	}
	ch <- prometheus.MustNewConstMetric(descGaugesUp, prometheus.GaugeValue, up)
	p := s.forum.PoolStats()
	ch <- prometheus.MustNewConstMetric(descPoolMax, prometheus.GaugeValue, float64(p.Max))
	ch <- prometheus.MustNewConstMetric(descPoolInUse, prometheus.GaugeValue, float64(p.InUse))
	ch <- prometheus.MustNewConstMetric(descPoolIdle, prometheus.GaugeValue, float64(p.Idle))
	ch <- prometheus.MustNewConstMetric(descPoolWaits, prometheus.CounterValue, float64(p.WaitCount))
	ch <- prometheus.MustNewConstMetric(descPoolWaited, prometheus.CounterValue, p.WaitDuration.Seconds())
	f := s.forum.FeedHealth()
	ch <- prometheus.MustNewConstMetric(descFeedOn, prometheus.GaugeValue, b2f(f.On))
	ch <- prometheus.MustNewConstMetric(descFeedDeg, prometheus.GaugeValue, b2f(f.Degraded))
	if f.RoundTrip > 0 {
		ch <- prometheus.MustNewConstMetric(descFeedLag, prometheus.GaugeValue, f.RoundTrip.Seconds())
	}
}

// gauges is Forum.Gauges, cached gaugesTTL; a failed read is retried at
// the next scrape.
func (s *stateCollector) gauges() (services.Gauges, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil && !s.at.IsZero() && time.Since(s.at) < gaugesTTL {
		return s.last, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	s.last, s.err = s.forum.Gauges(ctx)
	s.at = time.Now()
	return s.last, s.err
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
