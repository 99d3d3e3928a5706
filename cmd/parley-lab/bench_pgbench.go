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

// pgbenchScripts are the post transactions --pgbench can run: minimal_post
// (the default), an independent minimal post — lock the thread's row,
// insert the message, update the thread, insert an event — the limit
// Parley's posts are measured against; parley_post_old, the statements of
// Parley's post before it was batched, for comparison only.
//
//go:embed pgbench/minimal_post.sql
var pgbenchMinimal string

//go:embed pgbench/parley_post_old.sql
var pgbenchParleyOld string

var pgbenchScripts = map[string]string{"minimal_post": pgbenchMinimal, "parley_post_old": pgbenchParleyOld}

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// runPgbench runs the raw post transaction script (a name of
// pgbenchScripts) against db with as many clients
// as the bench has agents, for d, into the stage's threads, and returns its
// transactions per second: the database's own limit for posts.
func runPgbench(db, name string, st *stage, clients int, d time.Duration) (benchResult, error) {
	text, ok := pgbenchScripts[name]
	if !ok {
		return benchResult{}, fmt.Errorf("--pgbench-script: no script %q (minimal_post, parley_post_old)", name)
	}
	dir, err := os.MkdirTemp("", "parley-pgbench-")
	if err != nil {
		return benchResult{}, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "post.sql")
	if err := os.WriteFile(script, []byte(text), 0o600); err != nil {
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
	return benchResult{Op: "posts (pgbench " + name + ")", Transport: "sql", Agents: clients, Seconds: d.Seconds(), PerSecond: tps, Errors: map[string]int{}}, nil
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
