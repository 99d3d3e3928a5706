package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"parley/internal/testkit"
	"parley/migrations/dbtest"
)

// The binaries the tests run: the kit, the server as released, and the
// server built with the planted defects (build tag conformmutants).
var kitBin, parleyBin, mutantBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "parley-conform-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		for _, b := range []struct {
			out  *string
			pkg  string
			name string
			tags string
		}{
			{&kitBin, "parley/cmd/parley-conform", "parley-conform", ""},
			{&parleyBin, "parley/cmd/parley", "parley", ""},
			{&mutantBin, "parley/cmd/parley", "parley-mutants", "conformmutants"},
		} {
			*b.out = filepath.Join(dir, b.name)
			args := []string{"build", "-o", *b.out}
			if b.tags != "" {
				args = append(args, "-tags", b.tags)
			}
			if out, err := exec.Command("go", append(args, b.pkg)...).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "build %s: %v\n%s", b.name, err, out)
				return 1
			}
		}
		return m.Run()
	}()
	os.Exit(code)
}

// kitReport is the kit's --json output.
type kitReport struct {
	Checks []result `json:"checks"`
	Pass   bool     `json:"pass"`
}

// shellQuote quotes s for sh: a PostgreSQL URL holds ? and &.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// highLimits are the rate limits of a quick run: the kit posts a lot.
var highLimits = []string{"--posts-per-minute", "1000000", "--requests-per-minute", "1000000"}

// lowLimits are the reference instance's, lowered further, for the rates
// section: low enough to exhaust in a few seconds.
var lowLimits = []string{"--posts-per-minute", "20", "--requests-per-minute", "120"}

// server is how conformRun starts the server: its binary, database,
// environment, rate limits, and flags for both serve and mcp (as
// --trust-key) and for serve alone.
type server struct {
	binary, db string
	env        []string
	limits     []string // highLimits if nil
	both       []string
	serve      []string
}

// conformRun starts binary serve on db and runs the kit against it with
// args, over HTTP, MCP over Streamable HTTP and MCP over stdio; it returns
// the kit's report and exit code.
func conformRun(t *testing.T, binary, db string, env []string, args ...string) (kitReport, int) {
	t.Helper()
	return conformServer(t, server{binary: binary, db: db, env: env}, "", args...)
}

// conformServer is conformRun for a server described in full; addr is
// the address to serve on ("" for a free one).
func conformServer(t *testing.T, s server, addr string, args ...string) (kitReport, int) {
	t.Helper()
	limits := s.limits
	if limits == nil {
		limits = highLimits
	}
	if addr == "" {
		addr = testkit.FreeAddr(t)
	}
	srv := testkit.StartEnv(t, addr, s.env, append(append(append([]string{s.binary, "serve", "--db", s.db, "--addr", addr}, limits...), s.both...), s.serve...)...)
	junit := filepath.Join(t.TempDir(), "junit.xml")
	cmd := exec.Command(kitBin, append([]string{"--url", srv.URL(""), "--json", "--junit", junit,
		"--provision", parleyBin + " token create --db " + shellQuote(s.db),
		"--mcp-stdio", s.binary + " mcp --db " + shellQuote(s.db) + " " + strings.Join(slices.Concat(limits, s.both), " ")}, args...)...)
	cmd.Env = append(testkit.CleanEnv(), s.env...)
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var rep kitReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("the kit's --json output (exit %d): %v\n%s\nstderr:\n%s\nserver:\n%s", code, err, out, stderr.String(), srv.Tail())
	}
	if _, err := os.Stat(junit); err != nil {
		t.Errorf("no JUnit report: %v", err)
	}
	return rep, code
}

// peerServer starts a second forum, whose statements the kit presents as
// attestation evidence (§15 rule 6), and saves its published keys where
// the tested server reads them (--trust-key peer=FILE).
func peerServer(t *testing.T) (url, provision, keys string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "peer.db")
	addr := testkit.FreeAddr(t)
	srv := testkit.Start(t, addr, append([]string{parleyBin, "serve", "--db", db, "--addr", addr, "--realm", "peerforum"}, highLimits...)...)
	resp, err := http.Get(srv.URL("/.well-known/parley-keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the peer's keys: status %d, %v", resp.StatusCode, err)
	}
	keys = filepath.Join(t.TempDir(), "peer-keys.json")
	if err := os.WriteFile(keys, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return srv.URL(""), parleyBin + " token create --db " + shellQuote(db), keys
}

// oauthClient registers the OAuth client the kit sends authorization
// requests as, on a migrated db.
func oauthClient(t *testing.T, db string) (id, redirect string) {
	t.Helper()
	id, redirect = "parley-conform", "http://127.0.0.1/callback"
	for _, args := range [][]string{{"migrate", "--db", db},
		{"oauth", "client", "add", "--db", db, "--id", id, "--name", "parley-conform", "--redirect-uri", redirect}} {
		if out, err := exec.Command(parleyBin, args...).CombinedOutput(); err != nil {
			t.Fatalf("parley %v: %v\n%s", args, err, out)
		}
	}
	return id, redirect
}

// TestConformance runs the whole kit against the real server on both
// databases, over every binding, and wants every check to pass: with a
// peer forum the server trusts (attestation evidence, §15 rule 6) and
// OAuth served, then the rates section against a server with low limits.
func TestConformance(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			t.Run("all", func(t *testing.T) { conformAll(t, dialect) })
			// Then the rates section against a server whose limits it can
			// exhaust: every check passes over every binding, none skipped.
			// It runs once the whole kit's server has stopped, on a small
			// pool: PostgreSQL's connections are shared by every test
			// package.
			t.Run("rates", func(t *testing.T) { conformRates(t, dialect) })
		})
	}
}

// conformAll runs every section against a server with a trusted peer and
// OAuth served.
func conformAll(t *testing.T, dialect string) {
	t.Helper()
	db := dbtest.FreshURL(t, dialect)
	peer, peerProvision, peerKeys := peerServer(t)
	client, redirect := oauthClient(t, db)
	addr := testkit.FreeAddr(t)
	s := server{binary: parleyBin, db: db, both: []string{"--trust-key", "peer=" + peerKeys},
		serve: []string{"--oauth-issuer", "http://" + addr}}
	rep, code := conformServer(t, s, addr, "--peer-url", peer, "--peer-provision", peerProvision,
		"--oauth-resource", "http://"+addr+"/mcp/oauth", "--oauth-client", client, "--oauth-redirect-uri", redirect)
	bindings := map[string]int{}
	for _, c := range rep.Checks {
		if !c.Pass && !c.Skipped {
			t.Errorf("FAIL %s [%s] %s (%s): %s", c.Section, c.Binding, c.Name, c.Ref, c.Evidence)
		}
		if c.Pass {
			bindings[c.Binding]++
		}
	}
	if code != 0 || !rep.Pass {
		t.Errorf("exit %d, pass %v", code, rep.Pass)
	}
	for _, b := range []string{"http", "mcp", "mcp-stdio"} {
		if bindings[b] < 100 {
			t.Errorf("only %d checks passed over %s", bindings[b], b)
		}
	}
	for _, section := range []string{"manifest", "envelope", "acts", "states", "record", "authority", "identity", "self_reply",
		"reading", "limits", "refusals", "oauth", "dialectic", "feed", "guard", "witness"} {
		if !slices.ContainsFunc(rep.Checks, func(c result) bool { return c.Section == section && c.Pass }) {
			t.Errorf("no check of section %s passed", section)
		}
	}
	// The checks that need the peer, OAuth or a stdio process
	// beside the server ran rather than skipped.
	for _, name := range []string{
		"attestation evidence signed by a forum the operator trusts shows signed by NAME: valid",
		"a waiting MCP inbox with a progressToken sends notifications/progress at least every 10 s, then its answer",
		"a turn posted through one process wakes a waiting inbox of another: stdio beside HTTP, both ways",
		"an authorization request without its resource is refused invalid_target",
	} {
		if !slices.ContainsFunc(rep.Checks, func(c result) bool { return c.Name == name && c.Pass }) {
			t.Errorf("check %q passed over no binding", name)
		}
	}
}

// conformRates runs --only rates against a server with low limits.
func conformRates(t *testing.T, dialect string) {
	t.Helper()
	s := server{binary: parleyBin, db: dbtest.FreshURL(t, dialect), limits: lowLimits, serve: []string{"--db-max-conns", "4"}}
	rep, code := conformServer(t, s, "", "--only", "rates")
	for _, c := range rep.Checks {
		if !c.Pass {
			t.Errorf("%s [%s] %s (%s): skipped %v, %s", c.Section, c.Binding, c.Name, c.Ref, c.Skipped, c.Evidence)
		}
	}
	if code != 0 || !rep.Pass || len(rep.Checks) != 9 {
		t.Errorf("exit %d, pass %v, %d checks: want the 3 rates checks over 3 bindings", code, rep.Pass, len(rep.Checks))
	}
}

// TestPlantedDefectsAreCaught runs the kit against a server built with a
// rule broken on purpose, one defect at a time, and wants exactly the
// checks that name the rule to fail, over every binding.
func TestPlantedDefectsAreCaught(t *testing.T) {
	for _, tc := range []struct {
		mutant string
		only   string
		fails  []string // checks that must fail
	}{
		{"self_reply", "self_reply", []string{
			"a reply to one's own message (same extension) is self_reply",
			"the same extension replying to itself is self_reply",
			"self_reply is 409 with field parent on both bindings"}},
		{"behind_record", "record", []string{"a model's mark never lands behind the state of record"}},
		{"addressed", "reading", []string{"addressed=true lists only the turns that name the caller"}},
		{"posts_rate", "rates", []string{"the post after posts_per_minute is rate_limited with retry_after"}},
	} {
		t.Run(tc.mutant, func(t *testing.T) {
			t.Parallel()
			env := []string{"PARLEY_CONFORM_MUTANTS=" + tc.mutant}
			s := server{binary: mutantBin, db: dbtest.FreshURL(t, "sqlite"), env: env}
			if tc.only == "rates" {
				s.limits = lowLimits
			}
			rep, code := conformServer(t, s, "", "--only", tc.only, "--fast")
			if code != 1 || rep.Pass {
				t.Errorf("the kit passed a server with %s broken (exit %d)", tc.mutant, code)
			}
			failed := map[string][]string{}
			for _, c := range rep.Checks {
				if !c.Pass && !c.Skipped {
					failed[c.Name] = append(failed[c.Name], c.Binding)
				}
			}
			for _, name := range tc.fails {
				if got := failed[name]; !slices.Equal(got, []string{"http", "mcp", "mcp-stdio"}) {
					t.Errorf("check %q failed over %v, want every binding", name, got)
				}
			}
			t.Logf("failed with %s planted: %v", tc.mutant, failed)
		})
	}
	// Without the variable the mutant build is the released server.
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		rep, code := conformRun(t, mutantBin, dbtest.FreshURL(t, "sqlite"), nil, "--only", "self_reply", "--fast")
		if code != 0 || !rep.Pass {
			t.Errorf("the mutant build with no defect switched on fails (exit %d)", code)
		}
	})
}

// TestOutput runs the kit's text output, --only, --profile and its exit
// statuses against one server.
func TestOutput(t *testing.T) {
	t.Parallel()
	db := dbtest.FreshURL(t, "sqlite")
	addr := testkit.FreeAddr(t)
	srv := testkit.Start(t, addr, append([]string{parleyBin, "serve", "--db", db, "--addr", addr}, highLimits...)...)
	kit := func(args ...string) (string, int) {
		cmd := exec.Command(kitBin, args...)
		cmd.Env = testkit.CleanEnv()
		out, err := cmd.Output()
		if exit, ok := err.(*exec.ExitError); ok {
			return string(out), exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	provision := parleyBin + " token create --db " + shellQuote(db)

	out, code := kit("--url", srv.URL(""), "--provision", provision, "--only", "manifest", "--bindings", "http")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "pass  manifest    http") || !strings.Contains(lines[0], "(§8.2)") {
		t.Errorf("first line %q: want pass, section, binding, name and protocol section", lines[0])
	}
	if !strings.Contains(out, "manifest") || !strings.HasSuffix(strings.TrimSpace(out), "conforms: every check passed") ||
		strings.Contains(out, "envelope") {
		t.Errorf("--only manifest output:\n%s", out)
	}

	out, code = kit("--url", srv.URL(""), "--provision", provision, "--profile", "guard", "--fast", "--bindings", "http", "--json")
	var rep kitReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.Pass {
		t.Fatalf("--profile guard: exit %d, %v:\n%.2000s", code, err, out)
	}
	sections := map[string]bool{}
	for _, c := range rep.Checks {
		sections[c.Section] = true
	}
	if !sections["guard"] || !sections["states"] || sections["dialectic"] || sections["witness"] || sections["feed"] {
		t.Errorf("--profile guard ran sections %v: want the core and guard only", sections)
	}

	if _, code := kit("--url", srv.URL("")); code != 2 {
		t.Errorf("without --provision or --tokens: exit %d, want 2", code)
	}
	if _, code := kit("--url", "http://"+testkit.FreeAddr(t), "--provision", provision); code != 2 {
		t.Errorf("with no server: exit %d, want 2", code)
	}
}
