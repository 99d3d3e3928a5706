package client_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parley/internal/testkit"
	"parley/migrations/dbtest"
)

// The tests run the client against the real server: `parley serve`,
// built once, started as an operator starts it, on SQLite and on
// PostgreSQL.

// binary is the parley command, built once for all tests.
var binary string

// agentEnv marks the test binary re-run as an agent process by
// TestFollowSurvivesKills: it builds and starts nothing then.
const agentEnv = "CLIENT_TEST_AGENT"

func TestMain(m *testing.M) {
	if os.Getenv(agentEnv) != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "parley-client-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 1
	if binary, err = testkit.Build(dir, "parley/cmd/parley"); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else if stop, err := exampleServer(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
		stop()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// exampleServer starts the server the Example functions talk to, on
// SQLite in dir, and sets PARLEY_URL and the tokens ALICE_TOKEN,
// BOB_TOKEN and CAROL_TOKEN (read, write) that they read, as an agent's
// environment would.
func exampleServer(dir string) (stop func(), err error) {
	db := filepath.Join(dir, "examples.db")
	addr := freeAddr()
	cmd := exec.Command(binary, "serve", "--db", db, "--addr", addr)
	cmd.Env = testkit.CleanEnv()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop = func() { cmd.Process.Kill(); cmd.Wait() }
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("the examples' server never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	os.Setenv("PARLEY_URL", "http://"+addr)
	for _, h := range []string{"alice", "bob", "carol"} {
		out, err := exec.Command(binary, "token", "create", "--db", db, "--handle", h, "--rights", "read,write").Output()
		if err != nil {
			stop()
			return nil, fmt.Errorf("token create %s: %v", h, err)
		}
		os.Setenv(strings.ToUpper(h)+"_TOKEN", lastLine(string(out)))
	}
	return stop, nil
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// server is a `parley serve` of one test, on its own database.
type server struct {
	proc *testkit.Proc
	db   string
	URL  string
}

// eachDB runs fn as subtests "sqlite" and "postgres", each with a server
// of its own on a fresh database, started with flags.
func eachDB(t *testing.T, flags []string, fn func(t *testing.T, s *server)) {
	t.Helper()
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			db := dbtest.EmptyURL(t, dialect) // serve migrates it
			p := testkit.StartServe(t, binary, db, nil, flags...)
			fn(t, &server{proc: p, db: db, URL: p.URL("")})
		})
	}
}

// token creates a token for handle with rights and returns its secret.
func (s *server) token(t *testing.T, handle, rights string) string {
	t.Helper()
	r := testkit.Run(t, binary, nil, "", "token", "create", "--db", s.db, "--handle", handle, "--rights", rights)
	if r.Code != 0 {
		t.Fatalf("token create %s: %s", handle, r.Stderr)
	}
	return lastLine(r.Stdout)
}
