package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/client"
	"parley/internal/testkit"
	"parley/migrations/dbtest"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "parley-agent-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 1
	if binary, err = testkit.Build(dir, "parley/cmd/parley"); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestThreeAgentsDecide runs three of these agents, alice, bob and carol,
// against a real server: alice's question to bob goes through a clarify
// round, bob asserts his claim with evidence and answers, and alice
// decides — a proposal, as a model's decide is.
func TestThreeAgentsDecide(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			db := dbtest.EmptyURL(t, dialect)
			srv := testkit.StartServe(t, binary, db, nil)
			tokens := map[string]string{}
			for _, h := range []string{"alice", "bob", "carol"} {
				r := testkit.Run(t, binary, nil, "", "token", "create", "--db", db, "--handle", h, "--rights", "read,write")
				if r.Code != 0 {
					t.Fatal(r.Stderr)
				}
				lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
				tokens[h] = lines[len(lines)-1]
			}
			alice := client.New(srv.URL(""), tokens["alice"])
			asked, err := alice.Post(t.Context(), client.Ask("Which port should the service listen on?").WithTo("ainotes:bob", ""))
			if err != nil {
				t.Fatal(err)
			}
			th := asked.Thread.ID

			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			errs := make(chan error, 3)
			logger := log.New(testWriter{t}, "", 0)
			for h, token := range tokens {
				cfg := Config{URL: srv.URL(""), Token: token, State: filepath.Join(t.TempDir(), h)}
				wg.Add(1)
				go func() { defer wg.Done(); errs <- Run(ctx, cfg, Model, logger) }()
			}
			defer func() { cancel(); wg.Wait() }()

			// Wait for the decision in the thread's events.
			cursor, deadline := "", time.Now().Add(2*time.Minute)
			for decided := false; !decided; {
				if time.Now().After(deadline) {
					t.Fatalf("%s not decided in 2 minutes", th)
				}
				page, err := alice.Events(t.Context(), client.EventsQuery{Thread: th, Since: cursor, Wait: 5 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				cursor = page.Cursor
				for _, e := range page.Events {
					decided = decided || e.Type == "state" && e.ToState == string(client.Decided)
				}
				select {
				case err := <-errs:
					t.Fatalf("an agent stopped: %v", err)
				default:
				}
			}

			view, err := alice.ReadThread(t.Context(), th, client.ThreadQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if view.Thread.State != client.Decided || view.Thread.Confirmed || view.Thread.StateOfRecord != client.Open {
				t.Errorf("thread %s, confirmed %v, of record %s; want a proposed decided over open",
					view.Thread.State, view.Thread.Confirmed, view.Thread.StateOfRecord)
			}
			var got []string
			view.Walk(func(m *client.Message) {
				if m.Kind != client.KindAttest { // carol attests if she sees the claim's turn in time
					got = append(got, strings.TrimPrefix(m.From.Identity, "ainotes:")+" "+string(m.Kind))
				}
			})
			want := []string{"alice ask", "bob clarify", "alice answer", "bob assert", "bob answer", "alice decide"}
			if strings.Join(got, ", ") != strings.Join(want, ", ") {
				t.Errorf("messages %v, want %v", got, want)
			}
			claim, err := alice.GetClaim(t.Context(), "cl_1")
			if err != nil || len(claim.Evidence) == 0 {
				t.Errorf("bob's claim: %v, evidence %v", err, claim.Evidence)
			}
			t.Logf("claim %s %s with %d attestations", claim.ID, claim.Status, len(claim.Attestations))
		})
	}
}

// testWriter sends the agents' log to the test's.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
