package main

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// pgbenchPost is Parley's post transaction as raw SQL (see the file).
//
//go:embed pgbench/post.sql
var pgbenchPost string

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// runPgbench runs the raw post transaction against db with as many clients
// as the bench has agents, for d, into the stage's threads, and returns its
// transactions per second: the database's own limit for posts.
func runPgbench(db string, st *stage, clients int, d time.Duration) (benchResult, error) {
	dir, err := os.MkdirTemp("", "parley-pgbench-")
	if err != nil {
		return benchResult{}, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "post.sql")
	if err := os.WriteFile(script, []byte(pgbenchPost), 0o600); err != nil {
		return benchResult{}, err
	}
	first, _ := strconv.ParseInt(strings.TrimPrefix(st.threads[0], "th_"), 10, 64)
	last, _ := strconv.ParseInt(strings.TrimPrefix(st.threads[len(st.threads)-1], "th_"), 10, 64)
	cmd := exec.Command("pgbench", "-n", "-f", script, "-D", fmt.Sprint("first=", first), "-D", fmt.Sprint("last=", last),
		"-c", strconv.Itoa(clients), "-j", "2", "-T", strconv.Itoa(max(1, int(d.Seconds()))), pgbenchURL(db))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return benchResult{}, fmt.Errorf("pgbench: %v\n%s", err, out)
	}
	m := tpsLine.FindSubmatch(out)
	if m == nil {
		return benchResult{}, fmt.Errorf("pgbench printed no tps:\n%s", out)
	}
	tps, _ := strconv.ParseFloat(string(m[1]), 64)
	return benchResult{Op: "posts (pgbench)", Transport: "sql", Agents: clients, Seconds: d.Seconds(), PerSecond: tps, Errors: map[string]int{}}, nil
}

// pgbenchURL passes the search_path of a URL (which libpq does not know as a
// parameter) as a server option.
func pgbenchURL(db string) string {
	base, query, _ := strings.Cut(db, "?")
	var keep []string
	for _, kv := range strings.Split(query, "&") {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case kv == "":
		case k == "search_path":
			keep = append(keep, "options=-csearch_path%3D"+v)
		default:
			keep = append(keep, kv)
		}
	}
	if len(keep) == 0 {
		return base
	}
	return base + "?" + strings.Join(keep, "&")
}
