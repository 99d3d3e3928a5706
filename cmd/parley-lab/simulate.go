package main

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"parley/internal/cli"
	"parley/services"
)

// 'parley-lab simulate' runs scripted agents as goroutines against a running
// server, over HTTP or MCP, and measures what the guard profile (docs/protocol.md
// §14) lets through: see simulate_scenarios.go for the scenarios,
// simulate_measure.go for what is measured and checked.
//
// Tokens: simulate creates its agents' tokens itself, through the
// services, in the server's database (--db, the same as the server's). Every
// run's identities carry a fresh tag (sim-<tag>-…), so runs against one
// database never meet. The server needs nothing but to run.

// simBudget is how long the scenarios run and wait.
type simBudget struct {
	name          string
	swarm         time.Duration // how long the swarm runs
	deadline      time.Duration // how far ahead the silent asks' reply_by lies
	politeStories int           // stories per polite team
	think         [2]time.Duration
}

var simBudgets = map[string]simBudget{
	"short": {name: "short", swarm: 8 * time.Second, deadline: 2 * time.Second, politeStories: 4, think: [2]time.Duration{40 * time.Millisecond, 160 * time.Millisecond}},
	"long":  {name: "long", swarm: 60 * time.Second, deadline: 5 * time.Second, politeStories: 12, think: [2]time.Duration{300 * time.Millisecond, 700 * time.Millisecond}},
}

// escalationSlack is how long past its deadline an ask may take to
// escalate, by default: the guard profile's target, "within one second".
// --slack widens it where the machine, not the server, is slow (the
// lab's own tests on a loaded machine).
const escalationSlack = time.Second

func runSimulate(args []string) error {
	fs := cli.NewFlagSet("parley-lab simulate", "parley-lab simulate [--url URL] --db URL [--mcp] [--json] [--budget short|long] [--scenario NAME,...]")
	base := fs.String("url", "http://127.0.0.1:8080", "the running server's base `URL`")
	useMCP := fs.Bool("mcp", false, "speak MCP (POST /mcp) instead of the HTTP binding")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of a table")
	budget := fs.String("budget", "short", "`short` (about 20 s) or long (about 90 s)")
	only := fs.String("scenario", "", "comma-separated `names` to run (default: all)")
	slack := fs.Duration("slack", escalationSlack, "how long past its deadline an ask may take to escalate and still count as in time")
	var cfg cli.Config
	cfg.DBFlag(fs)
	cfg.RealmFlag(fs)
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	b, ok := simBudgets[*budget]
	if !ok {
		return cli.Usagef("--budget must be short or long")
	}
	chosen, err := chooseScenarios(*only)
	if err != nil {
		return err
	}
	ctx := context.Background()
	forum, closeDB, err := cfg.Forum(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	s, err := newSim(ctx, forum, strings.TrimSuffix(*base, "/"), *useMCP, b)
	if err != nil {
		return err
	}
	if s.slack = *slack; s.slack <= 0 {
		return cli.Usagef("--slack must be positive")
	}
	rep := report{Transport: s.transport(), Budget: b.name, Server: s.base, Limits: s.limits, OK: true}
	for _, sc := range chosen {
		fmt.Fprintf(os.Stderr, "simulate: %s …\n", sc.name)
		r, err := s.run(ctx, sc)
		if err != nil {
			return fmt.Errorf("scenario %s: %w", sc.name, err)
		}
		rep.Scenarios = append(rep.Scenarios, r)
		rep.OK = rep.OK && r.OK
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = rep.table(os.Stdout)
	}
	if err != nil {
		return err
	}
	if !rep.OK {
		return errors.New("simulate: a check failed (see the report)")
	}
	return nil
}

func chooseScenarios(only string) ([]scenario, error) {
	if only == "" {
		return scenarios, nil
	}
	var out []scenario
	for _, name := range strings.Split(only, ",") {
		i := slices.IndexFunc(scenarios, func(s scenario) bool { return s.name == strings.TrimSpace(name) })
		if i < 0 {
			return nil, cli.Usagef("unknown scenario %q: use %s", name, scenarioNames())
		}
		out = append(out, scenarios[i])
	}
	return out, nil
}

func scenarioNames() string {
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.name
	}
	return strings.Join(names, ", ")
}

// sim is one simulation run against one server.
type sim struct {
	forum  *services.Forum
	base   string
	mcp    bool
	budget simBudget
	slack  time.Duration // how late an escalation may be and count as in time
	tag    string        // names this run's identities
	http   *http.Client
	limits map[string]int

	observers []*agentClient // read-only agents that measure, in turn
	next      int
	human     *agent // a human: escalated threads reach its inbox
	warden    *agent // a lock holder that never posts: so they reach its inbox
	mu        sync.Mutex
}

func newSim(ctx context.Context, forum *services.Forum, base string, useMCP bool, b simBudget) (*sim, error) {
	tag := make([]byte, 3)
	cryptorand.Read(tag)
	s := &sim{forum: forum, base: base, mcp: useMCP, budget: b, tag: hex.EncodeToString(tag),
		http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 128}}}
	if err := s.readLimits(ctx); err != nil {
		return nil, err
	}
	for i := range 8 {
		// Measuring reads a lot; several readers keep each under the
		// per-token request limit.
		c, _, err := s.token(ctx, fmt.Sprintf("observer-%d", i), services.RightRead)
		if err != nil {
			return nil, err
		}
		s.observers = append(s.observers, c)
	}
	name := "sim-" + s.tag
	password := make([]byte, 16)
	cryptorand.Read(password)
	if err := forum.AddUser(ctx, name, hex.EncodeToString(password)); err != nil {
		return nil, fmt.Errorf("add the observing human: %w", err)
	}
	tok, err := forum.CreateToken(ctx, services.TokenRequest{Human: name})
	if err != nil {
		return nil, err
	}
	c, err := s.client(ctx, tok.Secret)
	if err != nil {
		return nil, err
	}
	s.human = &agent{name: "human", identity: tok.Token.Identity, api: c}
	c, identity, err := s.token(ctx, "warden", services.RightRead, services.RightWrite, services.RightLock)
	if err != nil {
		return nil, err
	}
	s.warden = &agent{name: "warden", identity: identity, api: c}
	return s, nil
}

// readLimits reads the limits in force from the manifest, as any client.
func (s *sim) readLimits(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, "GET", s.base+"/api/v1/manifest", nil)
	if err != nil {
		return err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return fmt.Errorf("is the server running at %s? %w", s.base, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m struct {
		Limits map[string]int `json:"limits"`
	}
	if err := json.Unmarshal(raw, &m); err != nil || m.Limits["guard_chain_max"] == 0 {
		return fmt.Errorf("%s does not serve a manifest with the guard profile's limits", s.base)
	}
	s.limits = map[string]int{}
	for _, k := range []string{"guard_recent_bodies", "guard_chain_max", "guard_thread_run_max", "reply_by_max_hours", "posts_per_minute"} {
		s.limits[k] = m.Limits[k]
	}
	return nil
}

func (s *sim) transport() string {
	if s.mcp {
		return "mcp"
	}
	return "http"
}

// token creates an agent's token and its client.
func (s *sim) token(ctx context.Context, handle string, rights ...services.Right) (*agentClient, string, error) {
	tok, err := s.forum.CreateToken(ctx, services.TokenRequest{Handle: "sim-" + s.tag + "-" + handle, Rights: rights})
	if err != nil {
		return nil, "", fmt.Errorf("create token %s: %w", handle, err)
	}
	c, err := s.client(ctx, tok.Secret)
	return c, tok.Token.Identity, err
}

func (s *sim) client(ctx context.Context, token string) (*agentClient, error) {
	c := newAgentClient(s.base, token, s.http, s.mcp, "parley-simulate")
	// Connect now: a server that refuses MCP fails the setup, not a scenario.
	return c, c.connect(ctx)
}

// observer is the next read-only client, in turn.
func (s *sim) observer() *agentClient {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	return s.observers[s.next%len(s.observers)]
}

// agent is one scripted participant.
type agent struct {
	name     string
	identity string
	api      *agentClient
	polite   bool // its guard refusals are false positives
	rec      *record
	rng      *rand.Rand
}

// agents makes n agents of a scenario, named prefix-1…, with the rights
// read and write (and lock for a steward).
func (s *sim) agents(ctx context.Context, rec *record, prefix string, n int, polite, lock bool) ([]*agent, error) {
	rights := []services.Right{services.RightRead, services.RightWrite}
	if lock {
		rights = append(rights, services.RightLock)
	}
	var out []*agent
	for i := range n {
		name := fmt.Sprintf("%s-%s-%d", rec.name, prefix, i+1)
		c, identity, err := s.token(ctx, name, rights...)
		if err != nil {
			return nil, err
		}
		a := &agent{name: name, identity: identity, api: c, polite: polite, rec: rec,
			rng: rand.New(rand.NewPCG(rec.seed, uint64(len(rec.agents))+1))}
		rec.agents = append(rec.agents, a)
		out = append(out, a)
	}
	return out, nil
}

// errStopped ends an agent's script: its scenario's time is up.
var errStopped = errors.New("stopped")

// post sends one envelope and tallies the answer. rate_limited is waited
// out and retried; any other refusal is returned to the script.
func (a *agent) post(ctx context.Context, env map[string]any) (msg, thread string, r *wireRefusal, err error) {
	for {
		if ctx.Err() != nil {
			return "", "", nil, errStopped
		}
		body, ref, err := a.api.do(ctx, "post", env)
		if err != nil {
			if ctx.Err() != nil {
				return "", "", nil, errStopped
			}
			a.rec.fault(err)
			return "", "", nil, err
		}
		if ref == nil {
			thread = digString(body, "thread", "id")
			a.rec.posted(thread)
			return digString(body, "message", "id"), thread, nil, nil
		}
		a.rec.refused(a, ref)
		if ref.Reason != string(services.RateLimited) {
			return "", "", ref, nil
		}
		wait := time.Duration(max(ref.RetryAfter, 1)) * time.Second
		select {
		case <-ctx.Done():
			return "", "", nil, errStopped
		case <-time.After(wait):
		}
	}
}

// think waits as a model would before its next act.
func (a *agent) think(ctx context.Context, span [2]time.Duration) error {
	d := span[0]
	if span[1] > span[0] {
		d += time.Duration(a.rng.Int64N(int64(span[1] - span[0])))
	}
	select {
	case <-ctx.Done():
		return errStopped
	case <-time.After(d):
		return nil
	}
}

// record is one scenario's tally, shared by its agents.
type record struct {
	name string
	seed uint64

	mu       sync.Mutex
	agents   []*agent
	threads  map[string]bool
	count    int
	refusals map[string]int
	polite   int // guard refusals of polite agents
	faults   []string
	asks     []*deadlineAsk
	rounds   map[string]string // clarify-round: thread → its asker's identity
}

// deadlineAsk is an ask that carried reply_by.
type deadlineAsk struct {
	thread, message string
	replyBy         time.Time
}

func newRecord(name string, seed uint64) *record {
	return &record{name: name, seed: seed, threads: map[string]bool{}, refusals: map[string]int{}, rounds: map[string]string{}}
}

// round notes a clarify-round thread and who asked in it.
func (r *record) round(thread, asker string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rounds[thread] = asker
}

func (r *record) posted(thread string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.count++
	r.threads[thread] = true
}

func (r *record) refused(a *agent, ref *wireRefusal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refusals[ref.Reason]++
	if a.polite && guardReason(ref.Reason) {
		r.polite++
	}
}

func (r *record) fault(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults = append(r.faults, err.Error())
}

func (r *record) ask(a *deadlineAsk) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asks = append(r.asks, a)
}

func guardReason(reason string) bool {
	return reason == string(services.DuplicateBody) || reason == string(services.LoopSuspected)
}
