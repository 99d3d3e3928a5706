package main_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"parley/internal/testkit"
)

// lab and server are the parley-lab and parley commands, built once for
// all tests: the lab measures a real `parley serve`.
var lab, server string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "parley-lab-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	lab, err = testkit.Build(dir, "parley/cmd/parley-lab")
	if err == nil {
		server, err = testkit.Build(dir, "parley/cmd/parley")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// labRun runs parley-lab with args.
func labRun(t *testing.T, args ...string) testkit.Result {
	t.Helper()
	return testkit.Run(t, lab, nil, "", args...)
}

// TestHelp: the lab's help lists its commands, and each command word
// dispatches (a flag mistake is the command's own usage error).
func TestHelp(t *testing.T) {
	r := labRun(t, "help")
	for _, want := range []string{"bench --url", "bench bare", "bench seed", "bench search", "simulate --db"} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Errorf("parley-lab help lacks %q (exit %d):\n%s", want, r.Code, r.Stdout)
		}
	}
	for _, words := range [][]string{{"bench"}, {"bench", "bare"}, {"bench", "seed"}, {"bench", "search"}, {"simulate"}} {
		r := labRun(t, append(words, "--nope")...)
		want := "parley-lab " + strings.Join(words, " ")
		if r.Code != 2 || !strings.Contains(r.Stderr, "usage: "+want) {
			t.Errorf("%v --nope: exit %d, want the usage of %q:\n%s", words, r.Code, want, r.Stderr)
		}
	}
	if r := labRun(t, "serve"); r.Code != 2 || !strings.Contains(r.Stderr, `unknown command "serve"`) {
		t.Errorf("the lab serves: exit %d\n%s", r.Code, r.Stderr)
	}
}
