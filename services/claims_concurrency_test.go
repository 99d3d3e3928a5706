package services_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestConcurrentClaimActs races attest, refute and verify on one claim.
// Afterwards the claim's events must be one path up the ladder and down
// (each transition once), its status the path's end, and every accepted
// act recorded on it.
func TestConcurrentClaimActs(t *testing.T) {
	for _, dialect := range []string{"postgres", "sqlite"} {
		t.Run(dialect, func(t *testing.T) {
			db := dbtest.Fresh(t, dialect)
			w := &world{t: t, db: db, forum: services.New(db, services.Config{}), ctx: context.Background()}
			alice := w.agent("alice")
			a := w.must(alice, env{"kind": "assert", "body": "Race the ladder."})
			th, cl := a.Thread.ID, a.Claim.ID
			var jobs []struct {
				who  services.Caller
				kind string
			}
			for i := range 30 {
				kind := []string{"attest", "attest", "verify", "attest", "refute", "verify"}[i%6]
				rights := []services.Right{services.RightRead, services.RightWrite, services.RightVerify}
				jobs = append(jobs, struct {
					who  services.Caller
					kind string
				}{w.agent(fmt.Sprintf("a%d", i), rights...), kind})
			}
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				accepted = map[string]int{}
				start    = make(chan struct{})
			)
			for i, j := range jobs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, err := w.post(j.who, env{"kind": j.kind, "thread": th, "claim": cl, "body": j.kind, "evidence": proof(fmt.Sprint("https://x/", i))})
					if r, unexpected := services.AsRefusal(err); err != nil && unexpected {
						t.Errorf("unexpected fault under contention: %v (%s)", err, r.Reason)
					} else if err == nil {
						mu.Lock()
						accepted[j.kind]++
						mu.Unlock()
					}
				}()
			}
			close(start)
			wg.Wait()

			c := w.claim(cl)
			// A quorum of 2 (§15.3): the first accepted verify is recorded
			// and the claim stays supported; the second seals it, and
			// later ones are refused, so a claim sealed took exactly two.
			if len(c.Attestations) != accepted["attest"] || len(c.Refutations) != accepted["refute"] ||
				len(c.Verifications) != accepted["verify"] || (c.VerifiedBy != nil) != (accepted["verify"] == 2) {
				t.Fatalf("claim %+v after accepted %v", c, accepted)
			}
			events := w.claimEvents(th)
			path := []string{cl + ":→unverified"}
			from := "unverified"
			for _, to := range []string{"supported", "verified", "refuted"} {
				step := cl + ":" + from + "→" + to
				if slices.Contains(events, step) {
					path, from = append(path, step), to
				}
			}
			if !slices.Equal(events, path) || string(c.Status) != from {
				t.Fatalf("claim events %v are not one path (status %s)", events, c.Status)
			}
			got, err := replay(eventsOf(t, w, th))
			if err == nil {
				err = got.matches(w.thread(th).Thread)
			}
			if err != nil {
				t.Fatalf("the thread's log with claim events: %v", err)
			}
			t.Logf("accepted %v; events %v", accepted, events)
		})
	}
}

// TestConcurrentCrossThreadSupersession races asserts that supersede
// claims of each other's thread. Each takes both threads' locks, always in
// the same order, so none deadlocks: every assert succeeds.
func TestConcurrentCrossThreadSupersession(t *testing.T) {
	for _, dialect := range []string{"postgres", "sqlite"} {
		t.Run(dialect, func(t *testing.T) {
			db := dbtest.Fresh(t, dialect)
			w := &world{t: t, db: db, forum: services.New(db, services.Config{}), ctx: context.Background()}
			alice, bob := w.agent("alice"), w.agent("bob")
			ta := w.must(bob, env{"kind": "ask", "body": "A"}).Thread.ID
			tb := w.must(bob, env{"kind": "ask", "body": "B"}).Thread.ID
			var inA, inB []string
			for i := range 10 {
				inA = append(inA, w.must(alice, env{"kind": "assert", "thread": ta, "body": fmt.Sprint("a", i)}).Claim.ID)
				inB = append(inB, w.must(alice, env{"kind": "assert", "thread": tb, "body": fmt.Sprint("b", i)}).Claim.ID)
			}
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range 10 {
				for _, job := range []struct{ thread, old, ext string }{{ta, inB[i], "p"}, {tb, inA[i], "q"}} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						_, err := w.post(alice, env{"kind": "assert", "thread": job.thread, "from": map[string]string{"extension": job.ext}, "supersedes": []string{job.old}, "body": "newer than " + job.old})
						if err != nil {
							t.Errorf("supersede %s from %s: %v", job.old, job.thread, err)
						}
					}()
				}
			}
			close(start)
			wg.Wait()
			for _, id := range append(inA, inB...) {
				if c := w.claim(id); c.Status != services.Superseded || c.SupersededBy == nil {
					t.Fatalf("claim %s after the race: %+v", id, c)
				}
			}
		})
	}
}

// eventsOf reads all of a thread's events.
func eventsOf(t *testing.T, w *world, th string) []services.Event {
	t.Helper()
	reader := services.Caller{Identity: "test:reader", Kind: services.KindLLM, Rights: []services.Right{services.RightRead}}
	page, err := w.forum.Events(w.ctx, reader, services.EventsQuery{Thread: th, Limit: "200"})
	if err != nil {
		t.Fatal(err)
	}
	return page.Events
}
