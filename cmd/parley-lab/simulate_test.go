package main_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"parley/internal/testkit"
)

// simReport is the part of `parley-lab simulate --json` the test reads.
type simReport struct {
	Transport string `json:"transport"`
	Limits    map[string]int
	Scenarios []struct {
		Name              string
		Posted            int
		Refusals          map[string]int
		LongestChain      int    `json:"longest_model_chain"`
		LongestRun        int    `json:"longest_model_run"`
		PausedThreads     int    `json:"paused_threads"`
		DuplicatesThrough int    `json:"duplicates_through"`
		AsksOverdue       int    `json:"asks_overdue"`
		Escalated         int    `json:"escalated"`
		EscalatedInTime   int    `json:"escalated_in_time"`
		MaxDelayMS        *int64 `json:"max_escalation_delay_ms"`
		InInboxes         int    `json:"overdue_in_human_and_lock_inboxes"`
		PoliteGuard       int    `json:"polite_guard_refusals"`
		FalseEscalations  int    `json:"false_escalations"`
		RoundAsks         int    `json:"clarify_round_asks"`
		RoundsAnswered    int    `json:"clarify_round_answered"`
		Faults            []string
		OK                bool
	}
	OK bool
}

// TestSimulateShortBudget is the proof in CI: `parley serve` on a
// fresh database, `parley-lab simulate --budget short` against it over HTTP
// (every scenario) and over MCP (a loop and the deadlines), and the numbers
// the guard must reach, read from --json: loops stop within guard_chain_max
// per branch and guard_thread_run_max per thread, no duplicate gets
// through, every silent ask escalates, and
// the polite team is never refused by the guard.
//
// What depends on the machine's speed is left to the lab's own runs: the
// test gives escalations a generous slack (the 250 ms sweep may lag on a
// loaded machine) and asks the swarm only to have posted;
// TestSimulateFailsALateServer shows that the default one-second slack
// has teeth.
func TestSimulateShortBudget(t *testing.T) {
	const slack = 15 * time.Second
	db := filepath.Join(t.TempDir(), "parley.db")
	srv := testkit.StartServe(t, server, db, nil)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"http", nil},
		{"mcp", []string{"--mcp", "--scenario", "echo-pair,silent"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"simulate", "--budget", "short", "--json", "--db", db, "--url", srv.URL(""), "--slack", slack.String()}, c.args...)
			r := labRun(t, args...)
			var rep simReport
			if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
				t.Fatalf("simulate --json: %v\nstdout:\n%s\nstderr:\n%s", err, r.Stdout, r.Stderr)
			}
			if r.Code != 0 || !rep.OK || rep.Transport != c.name {
				t.Fatalf("simulate exited %d, ok %v, transport %s:\n%s\nserver log:\n%s", r.Code, rep.OK, rep.Transport, r.Stdout, srv.Tail())
			}
			chainMax, runMax := rep.Limits["guard_chain_max"], rep.Limits["guard_thread_run_max"]
			if chainMax != 12 || runMax != 100 {
				t.Fatalf("limits %v", rep.Limits)
			}
			var names []string
			for _, s := range rep.Scenarios {
				names = append(names, s.Name)
				if !s.OK || len(s.Faults) > 0 {
					t.Errorf("%s: not ok, faults %v", s.Name, s.Faults)
				}
				if s.LongestChain > chainMax || s.LongestRun > runMax || s.DuplicatesThrough != 0 {
					t.Errorf("%s: chain %d, run %d, duplicates through %d", s.Name, s.LongestChain, s.LongestRun, s.DuplicatesThrough)
				}
				switch s.Name {
				case "echo-pair", "cycle-3":
					if s.Refusals["loop_suspected"] == 0 || s.PausedThreads != 1 || s.LongestRun != runMax || s.LongestChain != chainMax {
						t.Errorf("%s: the guard did not stop the loop at its limits: %+v", s.Name, s)
					}
				case "repeater":
					if s.Refusals["duplicate_body"] == 0 {
						t.Errorf("repeater: no duplicate_body: %+v", s)
					}
				case "silent":
					if s.AsksOverdue == 0 || s.Escalated != s.AsksOverdue || s.EscalatedInTime != s.Escalated ||
						s.MaxDelayMS == nil || *s.MaxDelayMS > slack.Milliseconds() || s.InInboxes != s.AsksOverdue {
						t.Errorf("silent: %d overdue, %d escalated, %d in time, slowest %v ms, %d in inboxes",
							s.AsksOverdue, s.Escalated, s.EscalatedInTime, s.MaxDelayMS, s.InInboxes)
					}
				case "polite":
					if s.PoliteGuard != 0 || s.FalseEscalations != 0 || s.Posted == 0 || len(s.Refusals) != 0 {
						t.Errorf("polite: %d guard refusals, %d false escalations, refusals %v", s.PoliteGuard, s.FalseEscalations, s.Refusals)
					}
				case "clarify-round":
					if s.RoundAsks == 0 || s.RoundsAnswered != s.RoundAsks || len(s.Refusals) != 0 {
						t.Errorf("clarify-round: %d of %d asks answered, refusals %v", s.RoundsAnswered, s.RoundAsks, s.Refusals)
					}
				case "swarm":
					if s.PoliteGuard != 0 || s.EscalatedInTime != s.Escalated || s.Escalated < s.AsksOverdue || s.Posted == 0 {
						t.Errorf("swarm: %+v", s)
					}
				}
			}
			want := []string{"echo-pair", "cycle-3", "repeater", "silent", "polite", "clarify-round", "swarm"}
			if c.name == "mcp" {
				want = []string{"echo-pair", "silent"}
			}
			if !slices.Equal(names, want) {
				t.Fatalf("scenarios %v, want %v", names, want)
			}
			if !strings.Contains(r.Stderr, "simulate: silent") {
				t.Errorf("no progress on stderr: %q", r.Stderr)
			}
		})
	}
}

// TestSimulateFailsALateServer: the check has teeth. A server that sweeps
// only every 30 s leaves the escalation to the measuring read, past the
// one-second slack: simulate reports it and exits 1.
func TestSimulateFailsALateServer(t *testing.T) {
	db := filepath.Join(t.TempDir(), "parley.db")
	srv := testkit.StartServe(t, server, db, nil, "--deadline-sweep", "30s")
	r := labRun(t, "simulate", "--json", "--db", db, "--url", srv.URL(""), "--scenario", "silent")
	var rep simReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	s := rep.Scenarios[0]
	if r.Code != 1 || rep.OK || s.EscalatedInTime != 0 || s.Escalated != s.AsksOverdue {
		t.Fatalf("a late server passed: exit %d, %+v", r.Code, s)
	}
}
