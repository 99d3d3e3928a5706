package main_test

import (
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"parley/internal/testkit"
	"parley/migrations"
	"parley/migrations/dbtest"
	"parley/models"
)

var columns = regexp.MustCompile(`\s{2,}`)

// binary is the parley command, built once for all tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "parley-cmd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if binary, err = testkit.Build(dir, "parley/cmd/parley"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result = testkit.Result

// parley runs the binary (testkit.Run).
func parley(t *testing.T, env []string, stdin string, args ...string) result {
	t.Helper()
	return testkit.Run(t, binary, env, stdin, args...)
}

// ok fails the test unless the command succeeded.
func ok(t *testing.T, r result) result {
	t.Helper()
	if r.Code != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	return r
}

// fails fails the test unless the command exited with code and said want
// on stderr, and nothing on stdout.
func fails(t *testing.T, r result, code int, want string) {
	t.Helper()
	if r.Code != code || !strings.Contains(r.Stderr, want) || r.Stdout != "" {
		t.Fatalf("want exit status %d and %q on stderr only; got %d\nstdout:\n%s\nstderr:\n%s",
			code, want, r.Code, r.Stdout, r.Stderr)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// row returns the cells of the line of a token list that shows identity:
// id, identity, kind, label, rights, created, revoked. Cells are split on the
// table's padding of two or more spaces, as labels may hold single spaces.
func row(t *testing.T, list, identity string) []string {
	t.Helper()
	for _, line := range strings.Split(list, "\n") {
		if f := columns.Split(strings.TrimSpace(line), -1); len(f) == 8 && f[1] == identity {
			return f
		}
	}
	t.Fatalf("no row for %s in\n%s", identity, list)
	return nil
}

// eachDB runs fn as subtests "sqlite" and "postgres" with a fresh database
// for the binary's --db: an SQLite file, or a schema of its own on the
// server named by PARLEY_TEST_DATABASE_URL.
func eachDB(t *testing.T, fn func(t *testing.T, db string)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, filepath.Join(t.TempDir(), "parley.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, postgresSchema(t))
	})
}

func postgresSchema(t *testing.T) string {
	url := dbtest.PostgresURL(t)
	admin, err := models.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, err := admin.DB()
	if err != nil {
		t.Fatal(err)
	}
	schema := "cmd_" + strings.ToLower(rand.Text())
	if err := admin.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		sqlDB.Close()
	})
	return dbtest.WithSearchPath(url, schema)
}

func TestHelp(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"help", "-h", "--help"} {
		r := ok(t, parley(t, nil, "", arg))
		for _, want := range []string{"serve", "migrate", "token create", "token list", "token revoke", "token owner", "user add",
			"--addr", "--db", "--realm", "--handle", "--human", "--rights", "--label", "PARLEY_PASSWORD"} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("parley %s: usage lacks %q", arg, want)
			}
		}
		// The product's help lists the product only: the lab is parley-lab.
		for _, lab := range []string{"parley bench", "parley simulate", "  bench ", "  simulate "} {
			if strings.Contains(r.Stdout, lab) {
				t.Errorf("parley %s lists the lab's %q", arg, lab)
			}
		}
	}
	fails(t, parley(t, nil, "", "bogus"), 2, `unknown command "bogus"`)
	fails(t, parley(t, nil, "", "token"), 2, "create, list, revoke or owner")
	fails(t, parley(t, nil, "", "token", "create", "--nope"), 2, "-nope")
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db string) {
		dialect := "sqlite"
		if models.IsPostgres(db) {
			dialect = "postgres"
		}
		latest, err := migrations.Latest(dialect)
		if err != nil {
			t.Fatal(err)
		}
		list, err := migrations.List(dialect)
		if err != nil {
			t.Fatal(err)
		}
		r := ok(t, parley(t, nil, "", "migrate", "--db", db))
		lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
		if len(lines) != len(list) || !strings.HasPrefix(lines[0], "applied version 1 ") {
			t.Fatalf("first migrate printed %q, want %d applied versions", r.Stdout, len(list))
		}
		r = ok(t, parley(t, []string{"PARLEY_DATABASE_URL=" + db}, "", "migrate"))
		if want := fmt.Sprintf("database is at version %d\n", latest); r.Stdout != want {
			t.Fatalf("second migrate printed %q, want %q", r.Stdout, want)
		}
	})
}

func TestTokens(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db string) {
		fails(t, parley(t, nil, "", "token", "list", "--db", db), 1, "parley migrate")
		ok(t, parley(t, nil, "", "migrate", "--db", db))

		r := ok(t, parley(t, nil, "", "token", "create", "--handle", "bob", "--rights", "read,write", "--label", "Bob the agent", "--db", db))
		secret := lastLine(r.Stdout)
		if !strings.HasPrefix(secret, "prl_") || strings.Count(r.Stdout, "\n") < 2 {
			t.Fatalf("token create printed %q: want a description, then the secret alone on the last line", r.Stdout)
		}
		list := ok(t, parley(t, nil, "", "token", "list", "--db", db)).Stdout
		if strings.Contains(list, secret) || strings.Contains(list, strings.Split(secret, "_")[2]) {
			t.Fatalf("token list shows the secret:\n%s", list)
		}
		bob := row(t, list, "ainotes:bob")
		if bob[3] != "Bob the agent" || bob[2] != "llm" || bob[4] != "read,write" || bob[6] != "-" {
			t.Fatalf("bob's row %v: want label \"Bob the agent\", kind llm, rights read,write, not revoked", bob)
		}

		// The realm comes from PARLEY_REALM unless --realm says otherwise.
		env := []string{"PARLEY_REALM=lab", "PARLEY_DATABASE_URL=" + db}
		ok(t, parley(t, env, "", "token", "create", "--handle", "eve", "--rights", "read"))
		ok(t, parley(t, env, "", "token", "create", "--handle", "eve", "--rights", "read", "--realm", "lab2"))
		list = ok(t, parley(t, env, "", "token", "list")).Stdout
		row(t, list, "lab:eve")
		row(t, list, "lab2:eve")

		fails(t, parley(t, nil, "", "token", "create", "--handle", "bob", "--rights", "read,fly", "--db", db), 1, `"fly"`)
		fails(t, parley(t, nil, "", "token", "create", "--handle", "Bad Name", "--rights", "read", "--db", db), 1, "handle")
		fails(t, parley(t, nil, "", "token", "create", "--db", db), 2, "--handle or --human")
		fails(t, parley(t, nil, "", "token", "create", "--handle", "bob", "--db", db), 2, "--rights")

		r = ok(t, parley(t, nil, "", "token", "revoke", bob[0], "--db", db))
		if !strings.Contains(r.Stdout, "revoked") {
			t.Fatalf("token revoke printed %q", r.Stdout)
		}
		list = ok(t, parley(t, nil, "", "token", "list", "--db", db)).Stdout
		if revoked := row(t, list, "ainotes:bob")[6]; revoked == "-" {
			t.Fatalf("bob's token is not shown revoked:\n%s", list)
		}
		fails(t, parley(t, nil, "", "token", "revoke", "999999", "--db", db), 1, "999999")
		fails(t, parley(t, nil, "", "token", "revoke", "bob", "--db", db), 2, "not a token ID")
	})
}

func TestUsers(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db string) {
		ok(t, parley(t, nil, "", "migrate", "--db", db))

		r := ok(t, parley(t, []string{"PARLEY_PASSWORD=correct horse"}, "", "user", "add", "carol", "--db", db))
		if r.Stdout != "added human:carol\n" {
			t.Fatalf("user add printed %q", r.Stdout)
		}
		ok(t, parley(t, nil, "battery staple\n", "user", "add", "dave", "--db", db))

		r = ok(t, parley(t, nil, "", "token", "create", "--human", "carol", "--db", db))
		if !strings.HasPrefix(lastLine(r.Stdout), "prl_") {
			t.Fatalf("token create --human printed %q", r.Stdout)
		}
		carol := row(t, ok(t, parley(t, nil, "", "token", "list", "--db", db)).Stdout, "human:carol")
		if carol[2] != "human" || carol[4] != "read,write" || carol[7] != "human:carol" {
			t.Fatalf("carol's row %v: want kind human, rights read,write, owned by herself", carol)
		}

		// Owners (docs/protocol.md §15.1): --owner at creation, or the
		// operator's token owner later, recorded as an owner event.
		ok(t, parley(t, nil, "", "token", "create", "--handle", "helper", "--rights", "read", "--owner", "carol", "--db", db))
		ok(t, parley(t, nil, "", "token", "create", "--handle", "free", "--rights", "read", "--db", db))
		list := ok(t, parley(t, nil, "", "token", "list", "--db", db)).Stdout
		if helper, free := row(t, list, "ainotes:helper"), row(t, list, "ainotes:free"); helper[7] != "human:carol" || free[7] != "-" {
			t.Fatalf("owners %q and %q: want human:carol and - (its own party)", helper[7], free[7])
		}
		free := row(t, list, "ainotes:free")
		r = ok(t, parley(t, nil, "", "token", "owner", free[0], "dave", "--db", db))
		if !strings.Contains(r.Stdout, "owner human:dave (was -), owner event 1") {
			t.Fatalf("token owner printed %q", r.Stdout)
		}
		if o := row(t, ok(t, parley(t, nil, "", "token", "list", "--db", db)).Stdout, "ainotes:free")[7]; o != "human:dave" {
			t.Fatalf("after token owner: %q, want human:dave", o)
		}
		fails(t, parley(t, nil, "", "token", "owner", free[0], "nobody", "--db", db), 1, "nobody")
		fails(t, parley(t, nil, "", "token", "owner", carol[0], "dave", "--db", db), 1, "owned by that human")
		fails(t, parley(t, nil, "", "token", "create", "--handle", "x", "--rights", "read", "--owner", "nobody", "--db", db), 1, "nobody")
		fails(t, parley(t, nil, "", "token", "owner", free[0], "--db", db), 2, "human's name")

		fails(t, parley(t, nil, "short\n", "user", "add", "erin", "--db", db), 1, "password")
		fails(t, parley(t, []string{"PARLEY_PASSWORD=correct horse"}, "", "user", "add", "carol", "--db", db), 1, "exists")
		// A human without an account gets one, with no password, so that a
		// provisioning script (parley-conform --provision) needs one command.
		r = ok(t, parley(t, nil, "", "token", "create", "--human", "nobody", "--db", db))
		if !strings.HasPrefix(r.Stdout, "added human:nobody, with no password") || !strings.HasPrefix(lastLine(r.Stdout), "prl_") {
			t.Fatalf("token create --human for a new human printed %q", r.Stdout)
		}
		if row(t, ok(t, parley(t, nil, "", "token", "list", "--db", db)).Stdout, "human:nobody")[2] != "human" {
			t.Fatal("the new human's token is not a human's")
		}
		fails(t, parley(t, []string{"PARLEY_PASSWORD=correct horse"}, "", "user", "add", "nobody", "--db", db), 1, "exists")
		fails(t, parley(t, nil, "", "token", "create", "--human", "carol", "--rights", "read", "--db", db), 2, "--rights")
	})
}

func TestServe(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "parley.db")
	addr := testkit.FreeAddr(t)
	cmd := exec.Command(binary, "serve", "--db", db)
	cmd.Env = append(testkit.CleanEnv(), "PARLEY_ADDR="+addr)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := client.Get("http://" + addr + "/healthz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || string(body) != "ok" {
				t.Fatalf("GET /healthz: %d %q, want 200 \"ok\"", resp.StatusCode, body)
			}
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("server exited early (%v):\n%s", err, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /healthz never answered: %v", err)
		}
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("server still running 10s after SIGTERM:\n%s", stderr.String())
	}
	if log := stderr.String(); !strings.Contains(log, addr) || !strings.Contains(log, "database="+db) {
		t.Fatalf("log lacks the address or the database:\n%s", log)
	}
	// Serving migrated the database.
	if r := ok(t, parley(t, nil, "", "migrate", "--db", db)); !strings.HasPrefix(r.Stdout, "database is at version ") {
		t.Fatalf("serve did not migrate: migrate printed %q", r.Stdout)
	}
}
