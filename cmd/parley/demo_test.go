package main_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"parley/internal/testkit"
	"parley/migrations/dbtest"
	"parley/models"
	"parley/services"
)

// TestDemo runs 'parley demo' on a fresh database, then reads the forum back
// through the services: every state, open proposals, a confirmed close,
// extensions, a moderator's badge and a deep tree must be there. A second
// run must refuse without adding anything.
func TestDemo(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			db := dbtest.EmptyURL(t, dialect)
			r := ok(t, parley(t, nil, "", "demo", "--db", db))
			for _, want := range []string{"parley-demo", "demo password", "http://127.0.0.1:8080", "parley serve",
				"ainotes:steward  read, write, lock  <- lock holder", "ainotes:planner  read, write\n"} {
				if !strings.Contains(r.Stdout, want) {
					t.Errorf("demo output lacks %q:\n%s", want, r.Stdout)
				}
			}
			forum := openForum(t, db)
			ctx := context.Background()

			// Every agent's token is printed and works; the steward moderates.
			for _, handle := range []string{"planner", "coder", "critic", "steward", "auditor"} {
				who, err := forum.Authenticate(ctx, tokenOf(t, r.Stdout, handle))
				if err != nil || who.Identity != "ainotes:"+handle {
					t.Fatalf("token printed for %s: %+v, %v", handle, who, err)
				}
				if handle == "steward" && who.Badge() != "KI · Steward" {
					t.Errorf("steward's badge is %q", who.Badge())
				}
			}

			// ada acts through a session the run ends, never a token: her
			// tokens page holds nothing she did not make (issue 29 item 13).
			issued, err := forum.ListTokens(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, tok := range issued {
				if tok.Identity == "human:ada" {
					t.Errorf("demo left a token for human:ada: %+v", tok)
				}
			}

			threads := allThreads(t, forum)
			if len(threads) < 8 {
				t.Fatalf("demo made %d threads, want at least 8", len(threads))
			}
			states := map[services.State]int{}
			unconfirmed, confirmedClosed := 0, false
			depth, extension, badge := 0, false, false
			for _, th := range threads {
				states[th.State]++
				if !th.Confirmed {
					unconfirmed++
				}
				confirmedClosed = confirmedClosed || th.State == services.Closed && th.Confirmed
				view, err := forum.ReadThread(ctx, reader, services.ThreadQuery{Thread: th.ID})
				if err != nil {
					t.Fatal(err)
				}
				walk(view.Messages, 1, func(m *services.Message, level int) {
					depth = max(depth, level)
					extension = extension || m.From.Extension != nil
					badge = badge || m.From.Badge == "KI · Steward"
				})
			}
			for _, s := range []services.State{services.Open, services.Answered, services.Decided, services.Closed, services.Deferred, services.Obsolete, services.Rejected} {
				if states[s] == 0 {
					t.Errorf("no thread is %s (states: %v)", s, states)
				}
			}
			if unconfirmed < 2 {
				t.Errorf("%d unconfirmed threads, want at least 2 proposals waiting", unconfirmed)
			}
			if !confirmedClosed {
				t.Error("no closed thread is confirmed")
			}
			if depth < 4 {
				t.Errorf("the deepest tree has %d levels, want at least 4", depth)
			}
			if !extension || !badge {
				t.Errorf("a message with from.extension: %v; one with badge KI · Steward: %v", extension, badge)
			}

			// Claims on every rung: verified, supported (waiting for a seal),
			// refuted and then superseded by its claimant.
			for _, status := range []string{"verified", "supported", "refuted"} {
				page, err := forum.ListClaims(ctx, reader, services.ClaimsQuery{Status: status})
				if err != nil || len(page.Claims) != 1 {
					t.Errorf("%s claims: %+v, %v", status, page.Claims, err)
				}
			}
			if page, _ := forum.ListClaims(ctx, reader, services.ClaimsQuery{Status: "refuted"}); len(page.Claims) == 1 && page.Claims[0].SupersededBy == nil {
				t.Error("the refuted claim was not superseded")
			}
			// The witness profile's quorum of 2: the verified claim through
			// two independent parties, the supported one with 1 of 2.
			for status, want := range map[string]int{"verified": 2, "supported": 1} {
				page, _ := forum.ListClaims(ctx, reader, services.ClaimsQuery{Status: status})
				if len(page.Claims) != 1 {
					continue // said above
				}
				if have, need := page.Claims[0].Quorum(); have != want || need != 2 {
					t.Errorf("the %s claim has %d of %d independent verifiers, want %d of 2", status, have, need, want)
				}
			}

			// A second run refuses before creating anything, tokens included.
			tokens := countTokens(t, forum)
			fails(t, parley(t, nil, "", "demo", "--db", db), 1, "already has "+strconv.Itoa(len(threads))+" threads")
			if n := len(allThreads(t, forum)); n != len(threads) {
				t.Errorf("the refused run left %d threads, had %d", n, len(threads))
			}
			if n := countTokens(t, forum); n != tokens {
				t.Errorf("the refused run left %d tokens, had %d", n, tokens)
			}
		})
	}
}

// TestDemoRefusesAnExistingHuman: a forum without threads but with a human
// named ada is not empty either.
func TestDemoRefusesAnExistingHuman(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "parley.db")
	ok(t, parley(t, nil, "", "migrate", "--db", db))
	ok(t, parley(t, []string{"PARLEY_PASSWORD=correct horse"}, "", "user", "add", "ada", "--db", db))
	fails(t, parley(t, nil, "", "demo", "--db", db), 1, "already has a human named ada")
	if n := countTokens(t, openForum(t, db)); n != 0 {
		t.Errorf("the refused run created %d tokens", n)
	}
}

func TestDemoUsage(t *testing.T) {
	t.Parallel()
	if r := ok(t, parley(t, nil, "", "help")); !strings.Contains(r.Stdout, "parley demo [--serve] [--db URL] [--realm REALM] [--addr ADDR]") {
		t.Errorf("usage lacks demo:\n%s", r.Stdout)
	}
	fails(t, parley(t, nil, "", "demo", "extra"), 2, `unexpected argument "extra"`)
}

// reader reads without a token, as a binding's caller with the right read.
var reader = services.Caller{Identity: "test:reader", Kind: services.KindLLM, Rights: []services.Right{services.RightRead}}

func openForum(t *testing.T, url string) *services.Forum {
	t.Helper()
	db, err := models.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqlDB.Close() })
	return services.New(db, services.Config{})
}

func allThreads(t *testing.T, forum *services.Forum) []services.Thread {
	t.Helper()
	page, err := forum.ListThreads(context.Background(), reader, services.ListQuery{Limit: "200"})
	if err != nil || page.Cursor != nil {
		t.Fatalf("list threads: %v (cursor %v)", err, page.Cursor)
	}
	return page.Threads
}

func countTokens(t *testing.T, forum *services.Forum) int {
	t.Helper()
	tokens, err := forum.ListTokens(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(tokens)
}

// tokenOf finds the line "handle  token" of the demo's output.
func tokenOf(t *testing.T, out, handle string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == handle && strings.HasPrefix(f[1], "prl_") {
			return f[1]
		}
	}
	t.Fatalf("no token line for %s in\n%s", handle, out)
	return ""
}

// walk calls fn on every message of a tree with its level (the root is 1).
func walk(ms []*services.Message, level int, fn func(*services.Message, int)) {
	for _, m := range ms {
		fn(m, level)
		walk(m.Replies, level+1, fn)
	}
}

// TestDemoFromAnyFolder: the binary needs nothing of the source tree; run
// from an empty folder, demo makes the SQLite file --db names there.
func TestDemoFromAnyFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), binary, "demo", "--db", "forum.db")
	cmd.Dir, cmd.Env = dir, testkit.CleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo from %s: %v\n%s", dir, err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "forum.db")); err != nil || !strings.Contains(string(out), "lock holder") {
		t.Fatalf("no forum.db in the folder, or no lock holder named (%v):\n%s", err, out)
	}
}

// TestDemoServe: the README's first command. On an empty database demo
// --serve prints ada's password and the agents' tokens, then serves the
// forum they work in; run again on the same file it only serves it.
func TestDemoServe(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "parley.db")
	addr := testkit.FreeAddr(t)
	p := testkit.Start(t, addr, binary, "demo", "--serve", "--db", db, "--addr", addr)
	out := p.Stdout.String()
	if !strings.Contains(out, "password parley-demo") {
		t.Fatalf("no password for ada:\n%s", out)
	}
	if !strings.Contains(out, "Serving it at http://"+addr) {
		t.Fatalf("demo --serve does not say where it serves:\n%s", out)
	}
	token := tokenOf(t, out, "steward")
	status, me, err := call(http.DefaultClient, "GET", p.URL("/api/v1/me"), token, nil)
	if err != nil || status != 200 || testkit.Str(me, "identity") == "" {
		t.Fatalf("a printed token does not work on the served forum: %d %v %v", status, me, err)
	}
	status, list, err := call(http.DefaultClient, "GET", p.URL("/api/v1/threads"), token, nil)
	if threads, _ := testkit.Dig(list, "threads").([]any); err != nil || status != 200 || len(threads) == 0 {
		t.Fatalf("the served forum has no threads: %d %v %v", status, list, err)
	}
	p.Kill()

	again := testkit.Start(t, addr, binary, "demo", "--serve", "--db", db, "--addr", addr)
	if out := again.Stdout.String(); !strings.Contains(out, "serving it as it is") || strings.Contains(out, "Agent tokens") {
		t.Fatalf("a second demo --serve filled again instead of serving:\n%s", out)
	}
	if status, _, err := call(http.DefaultClient, "GET", again.URL("/api/v1/me"), token, nil); err != nil || status != 200 {
		t.Fatalf("the first run's token no longer works: %d %v", status, err)
	}
}
