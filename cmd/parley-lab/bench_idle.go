package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// runIdle measures what holding the listeners costs while nothing happens
// (issue 31, item 2): for d, no agent does anything, and it counts the
// transactions the server's database committed or rolled back
// (pg_stat_database, which counts every process on it, this measure's own
// two reads included), the server's CPU (--server-pid) and PostgreSQL's
// (every postgres process on the machine: other databases' work counts
// too, so read it beside the transactions).
//
// The window opens once every listener holds its slot (held: the rows of
// the streams table) and statsSettle later, so that their admissions fall
// outside it; keep d under wait_max_seconds less that, or the waits'
// renewals fall inside.
func runIdle(ctx context.Context, dbURL string, d time.Duration, pid, held int) (benchResult, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return benchResult{}, fmt.Errorf("idle: %w", err)
	}
	defer conn.Close(ctx)
	for waited := time.Duration(0); ; waited += 100 * time.Millisecond {
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM streams").Scan(&n); err != nil {
			return benchResult{}, fmt.Errorf("idle: %w", err)
		}
		if n >= held {
			break
		}
		if waited > 2*time.Minute {
			return benchResult{}, fmt.Errorf("idle: %d of %d listeners hold their slot after %s", n, held, waited)
		}
		time.Sleep(100 * time.Millisecond)
	}
	transactions := func() (int64, error) {
		// The statistics of other backends reach the view at most a second late.
		var n int64
		err := conn.QueryRow(ctx, `SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()`).Scan(&n)
		return n, err
	}
	// A backend reports its transactions to pg_stat_database when it is
	// idle, at most every 10 s (PostgreSQL 15): let the admissions' counts
	// arrive before the window opens.
	time.Sleep(statsSettle)
	if _, err := conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		return benchResult{}, fmt.Errorf("idle: %w", err)
	}
	tx0, err := transactions()
	if err != nil {
		return benchResult{}, fmt.Errorf("idle: %w", err)
	}
	cpu0, pg0, t0 := cpuSeconds(pid), postgresCPUSeconds(), time.Now()
	select {
	case <-ctx.Done():
		return benchResult{}, ctx.Err()
	case <-time.After(d):
	}
	if _, err := conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		return benchResult{}, fmt.Errorf("idle: %w", err)
	}
	tx1, err := transactions()
	if err != nil {
		return benchResult{}, fmt.Errorf("idle: %w", err)
	}
	secs := time.Since(t0).Seconds()
	r := benchResult{Op: "idle", Transport: "db", Seconds: secs, Ops: int(tx1 - tx0), PerSecond: float64(tx1-tx0) / secs}
	if pid > 0 {
		r.ServerCPUPct = (cpuSeconds(pid) - cpu0) * 100 / secs
	}
	r.DBCPUPct = (postgresCPUSeconds() - pg0) * 100 / secs
	return r, nil
}

// statsSettle is how long the statistics of earlier transactions may take
// to reach pg_stat_database.
const statsSettle = 11 * time.Second

// postgresCPUSeconds is the CPU time of every postgres process now running
// on this machine, in seconds (0 where /proc cannot tell).
func postgresCPUSeconds() float64 {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	total := 0.0
	for _, dir := range dirs {
		comm, err := os.ReadFile(filepath.Join(dir, "comm"))
		if err != nil || !strings.HasPrefix(strings.TrimSpace(string(comm)), "postgres") {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err == nil {
			total += cpuSeconds(pid)
		}
	}
	return total
}
