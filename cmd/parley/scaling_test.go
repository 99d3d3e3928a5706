package main_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/internal/testkit"
	"parley/models"
	"parley/services"
)

// TestScalingCeilings measures, in one run, the posts per second one
// PostgreSQL primary takes from 1, 3 and 6 app servers, direct and through
// PgBouncer in transaction mode (the best of two rounds of 24 agents
// posting 40 times each, spread over the servers), and samples what the
// database's active sessions wait on meanwhile (pg_stat_activity every
// 10 ms): the figures of docs/scaling.md. It asserts only that every post
// succeeds. A measurement, so it runs only when asked:
// PARLEY_MEASURE_SCALING=1 go test ./cmd/parley -run TestScalingCeilings -v
func TestScalingCeilings(t *testing.T) {
	if os.Getenv("PARLEY_MEASURE_SCALING") == "" {
		t.Skip("a measurement: set PARLEY_MEASURE_SCALING=1")
	}
	direct := freshDatabase(t)
	pgb := testkit.StartPgBouncer(t, direct)
	pooled := pgb.URL(direct)
	ok(t, parley(t, nil, "", "migrate", "--db", direct))
	forum := openForum(t, direct)
	var tokens []string
	for i := range 24 {
		tok, err := forum.CreateToken(context.Background(), services.TokenRequest{Handle: fmt.Sprintf("agent%d", i),
			Rights: []services.Right{services.RightRead, services.RightWrite}})
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, tok.Secret)
	}
	watch, err := models.Open(direct)
	if err != nil {
		t.Fatal(err)
	}
	if sqlDB, err := watch.DB(); err == nil {
		defer sqlDB.Close()
	}
	limits := []string{"--posts-per-minute", "100000", "--requests-per-minute", "100000", "--db-max-conns", "8"}
	type path struct {
		name    string
		servers int
		pooled  bool
	}
	var paths []path
	for _, n := range []int{1, 3, 6} {
		paths = append(paths, path{fmt.Sprintf("%d direct", n), n, false}, path{fmt.Sprintf("%d PgBouncer", n), n, true})
	}
	rate := map[string]float64{}
	waits := map[string]map[string]int{}
	for round := range 2 {
		for _, p := range paths {
			var procs []*testkit.Proc
			for range p.servers {
				if p.pooled {
					procs = append(procs, startServe(t, pooled, nil, append(limits, "--db-listen-url", direct)...))
				} else {
					procs = append(procs, startServe(t, direct, nil, limits...))
				}
			}
			posters(procs[0], "warm-up", tokens[:4], 5, 0, make(chan struct{}))
			sampled := make(chan map[string]int)
			stopSampling := make(chan struct{})
			go func() { sampled <- sampleWaits(watch, stopSampling) }()
			var wg sync.WaitGroup
			var mu sync.Mutex
			acks, failed := 0, 0
			start := time.Now()
			for i, srv := range procs {
				var mine []string
				for j, tok := range tokens {
					if j%p.servers == i {
						mine = append(mine, tok)
					}
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					a, f := posters(srv, fmt.Sprintf("%s round %d server %d", p.name, round, i), mine, 40, 0, make(chan struct{}))
					mu.Lock()
					acks += len(a)
					failed += f
					mu.Unlock()
				}()
			}
			wg.Wait()
			took := time.Since(start)
			close(stopSampling)
			w := <-sampled
			if failed != 0 {
				t.Fatalf("%s: %d posts failed:\n%s", p.name, failed, procs[0].Tail())
			}
			if r := float64(acks) / took.Seconds(); r > rate[p.name] {
				rate[p.name], waits[p.name] = r, w
			}
			for _, srv := range procs {
				srv.Kill()
			}
		}
	}
	base := rate[paths[0].name]
	for _, p := range paths {
		t.Logf("%-12s %6.0f posts/s, %.2f of 1 direct; active sessions waited on: %s", p.name, rate[p.name], rate[p.name]/base, topWaits(waits[p.name]))
	}
}

// sampleWaits counts, every 10 ms until stop closes, what the active
// sessions of the database wait on ("CPU" for none), the sampler's own
// excepted.
func sampleWaits(db *gorm.DB, stop <-chan struct{}) map[string]int {
	counts := map[string]int{}
	for {
		select {
		case <-stop:
			return counts
		case <-time.After(10 * time.Millisecond):
		}
		var rows []struct {
			Kind string
			N    int
		}
		db.Raw(`SELECT COALESCE(wait_event_type || ':' || wait_event, 'CPU') AS kind, count(*) AS n FROM pg_stat_activity
			WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid() GROUP BY 1`).Scan(&rows)
		counts["_samples"]++
		for _, r := range rows {
			counts[r.Kind] += r.N
		}
	}
}

// topWaits names the most sampled waits with their shares.
func topWaits(counts map[string]int) string {
	total := 0
	var kinds []string
	for k, n := range counts {
		if k == "_samples" {
			continue
		}
		total += n
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return counts[kinds[i]] > counts[kinds[j]] })
	var out []string
	for _, k := range kinds[:min(5, len(kinds))] {
		out = append(out, fmt.Sprintf("%s %.0f%%", k, 100*float64(counts[k])/float64(max(total, 1))))
	}
	return fmt.Sprintf("%.1f active on average; ", float64(total)/float64(max(1, counts["_samples"]))) + strings.Join(out, ", ")
}
