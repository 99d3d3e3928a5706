package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// benchResult is one operation's figures.
type benchResult struct {
	Round     int            `json:"round,omitempty"` // of --rounds, from 1
	Op        string         `json:"op"`
	Transport string         `json:"transport"`
	Agents    int            `json:"agents"`
	Seconds   float64        `json:"seconds"`
	Ops       int            `json:"ops"`
	PerSecond float64        `json:"per_second"`
	P50ms     float64        `json:"p50_ms"`
	P95ms     float64        `json:"p95_ms"`
	P99ms     float64        `json:"p99_ms"`
	Errors    map[string]int `json:"errors"`
	RSSMiB    float64        `json:"server_peak_rss_mib,omitempty"`
	// OfLimit is posts/s as a share of the pgbench limit measured in the
	// same run, when there is one.
	OfLimit float64 `json:"of_limit,omitempty"`
	// OfBare is ops/s as a share of the bare handler's for the same
	// operation just before, when there is one (--bare).
	OfBare float64 `json:"of_bare,omitempty"`
	// P99OfBare is a fan-out's p99 as a multiple of the bare handlers'
	// in the same round.
	P99OfBare float64 `json:"p99_of_bare,omitempty"`
	// CPUms is the server's CPU time per operation (--server-pid, or
	// --bare-pid for the bare handler).
	CPUms float64 `json:"server_cpu_ms_per_op,omitempty"`
	// ServerCPUPct and DBCPUPct are, for idle, the server's and
	// PostgreSQL's CPU over the window, in percent of one core.
	// DBCPUms is PostgreSQL's CPU time per operation, of the backends
	// connected to the database (--db-cpu).
	DBCPUms float64 `json:"db_cpu_ms_per_op,omitempty"`
	// Load is the machine's load average (1, 5, 15 min) as the measure
	// ended.
	Load         string  `json:"load_average,omitempty"`
	ServerCPUPct float64 `json:"server_cpu_percent,omitempty"`
	DBCPUPct     float64 `json:"db_cpu_percent,omitempty"`
	// For fanout: the slowest wake, the database transactions the wake
	// cost, how long the calls took to be admitted, and each server's
	// memory and goroutines per waiting call.
	MinMs            float64 `json:"min_ms,omitempty"`
	MaxMs            float64 `json:"max_ms,omitempty"`
	WakeTransactions int64   `json:"wake_transactions,omitempty"`
	// QuietTransactions: as many seconds just before the post, for
	// comparison; the renewals are the waits renewed in each window.
	QuietTransactions int64          `json:"quiet_transactions,omitempty"`
	QuietRenewals     int64          `json:"quiet_renewals,omitempty"`
	WakeRenewals      int64          `json:"wake_renewals,omitempty"`
	AdmitSeconds      float64        `json:"admit_seconds,omitempty"`
	PerWaiter         []fanoutMemory `json:"per_waiter,omitempty"`
	// QuietSkipped: the calls took so long to be admitted that a quiet
	// window would have outlasted their waits. WakeCPUMs: the CPU each
	// process spent from the post until the last call was answered
	// (servers, this client, PostgreSQL's backends of the database), which
	// says who the wake waited for on a shared machine.
	QuietSkipped bool               `json:"quiet_skipped,omitempty"`
	WakeCPUMs    map[string]float64 `json:"wake_cpu_ms,omitempty"`
}

func (r *benchResult) setCPU(before, after float64) {
	if after > before && r.Ops > 0 {
		r.CPUms = (after - before) * 1000 / float64(r.Ops)
	}
}

// loadAverage is /proc/loadavg's three load averages ("" where unknown).
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func (r *benchResult) setDBCPU(seconds float64) {
	r.Load = loadAverage()
	if seconds > 0 && r.Ops > 0 {
		r.DBCPUms = seconds * 1000 / float64(r.Ops)
	}
}

// ratios sets OfLimit on every post operation of a round with a pgbench
// limit, and OfBare on every operation of a round with the bare
// handler's, whichever ran first.
func ratios(results []benchResult) {
	limit, bare, bareP99 := map[int]float64{}, map[[2]any]float64{}, map[int]float64{}
	for _, r := range results {
		if r.Op == "fanout (bare)" {
			bareP99[r.Round] = r.P99ms
		}
		if op, ok := strings.CutSuffix(r.Op, " (bare)"); ok {
			bare[[2]any{r.Round, op}] = r.PerSecond
		}
		if r.Transport == "sql" {
			limit[r.Round] = r.PerSecond
		}
	}
	for i, r := range results {
		if r.Op == "fanout" {
			// A wake's measure is its latency: p99 against the bare one's.
			if b := bareP99[r.Round]; b > 0 {
				results[i].P99OfBare = r.P99ms / b
			}
			continue
		}
		if b := bare[[2]any{r.Round, r.Op}]; b > 0 && r.Transport == "http" {
			results[i].OfBare = r.PerSecond / b
		}
		if l := limit[r.Round]; l > 0 && r.Transport != "sql" && (r.Op == "posts" || r.Op == "hot") {
			results[i].OfLimit = r.PerSecond / l
		}
	}
}

func summarize(op, transport string, agents int, took time.Duration, lat []time.Duration, errs map[string]int) benchResult {
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		i := min(len(lat)-1, int(p*float64(len(lat))))
		return float64(lat[i].Microseconds()) / 1000
	}
	return benchResult{
		Op: op, Transport: transport, Agents: agents, Seconds: took.Seconds(),
		Ops: len(lat), PerSecond: float64(len(lat)) / took.Seconds(),
		P50ms: pct(0.50), P95ms: pct(0.95), P99ms: pct(0.99), Errors: errs,
	}
}

// fanRound names a fan-out's round when there were several.
func fanRound(r benchResult) string {
	if r.Round > 1 {
		return fmt.Sprintf(" (round %d)", r.Round)
	}
	return ""
}

func printTable(w io.Writer, results []benchResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\ttransport\tagents\tops/s\tof limit\tof bare\tp50 ms\tp95 ms\tp99 ms\terrors\tserver RSS MiB\tserver CPU ms/op\tDB CPU ms/op\tload\t")
	var idle, fan []benchResult
	for _, r := range results {
		if r.Op == "idle" {
			idle = append(idle, r)
			continue
		}
		if strings.HasPrefix(r.Op, "fanout") {
			fan = append(fan, r)
			continue
		}
		errs := 0
		for _, n := range r.Errors {
			errs += n
		}
		rss := "-"
		if r.RSSMiB > 0 {
			rss = fmt.Sprintf("%.0f", r.RSSMiB)
		}
		share := "-"
		if r.OfLimit > 0 {
			share = fmt.Sprintf("%.2f", r.OfLimit)
		}
		ofBare := "-"
		if r.OfBare > 0 {
			ofBare = fmt.Sprintf("%.2f", r.OfBare)
		}
		cpu := "-"
		if r.CPUms > 0 {
			cpu = fmt.Sprintf("%.3f", r.CPUms)
		}
		dbcpu := "-"
		if r.DBCPUms > 0 {
			dbcpu = fmt.Sprintf("%.3f", r.DBCPUms)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%s\t%s\t%.2f\t%.2f\t%.2f\t%d\t%s\t%s\t%s\t%s\t\n", r.Op, r.Transport, r.Agents, r.PerSecond, share, ofBare, r.P50ms, r.P95ms, r.P99ms, errs, rss, cpu, dbcpu, r.Load)
	}
	tw.Flush()
	for _, r := range idle {
		fmt.Fprintf(w, "idle over %.0f s: %.2f database transactions/s, server CPU %.2f %%, PostgreSQL CPU %.2f %% (every database on the machine)\n",
			r.Seconds, r.PerSecond, r.ServerCPUPct, r.DBCPUPct)
	}
	for _, r := range fan {
		errs := 0
		for _, n := range r.Errors {
			errs += n
		}
		fmt.Fprintf(w, "%s%s: %d waiting calls (admitted in %.1f s), one ask to anyone: %d woken in min %.1f ms, p50 %.1f ms, p99 %.1f ms, max %.1f ms, %d not (%v); database transactions in the %.0f s from the post %d (waits renewed %d), in as long just before %d (renewed %d)\n",
			r.Op, fanRound(r), r.Agents, r.AdmitSeconds, r.Ops, r.MinMs, r.P50ms, r.P99ms, r.MaxMs, errs, r.Errors, statsSettle.Seconds(), r.WakeTransactions, r.WakeRenewals, r.QuietTransactions, r.QuietRenewals)
		if r.P99OfBare > 0 {
			fmt.Fprintf(w, "  p99 %.2f× the bare handlers' in the same round\n", r.P99OfBare)
		}
		if r.Load != "" {
			fmt.Fprintf(w, "  load average at the ask %s\n", r.Load)
		}
		if r.QuietSkipped {
			fmt.Fprintf(w, "  (no quiet window: the admission left too little of the waits)\n")
		}
		if len(r.WakeCPUMs) > 0 {
			fmt.Fprintf(w, "  CPU from the post to the last answer (%.0f ms): %v ms\n", r.MaxMs, r.WakeCPUMs)
		}
		for _, m := range r.PerWaiter {
			if m.HeapKB == 0 && m.StackKB == 0 { // no profiler to ask: resident memory only
				fmt.Fprintf(w, "  %s per waiting call: RSS %.1f KiB\n", m.Server, m.RSSKB)
				continue
			}
			fmt.Fprintf(w, "  %s per waiting call: RSS %.1f KiB, heap %.1f KiB (%.1f KiB of objects), stacks %.1f KiB (after GC), %.2f goroutines\n", m.Server, m.RSSKB, m.HeapKB, m.LiveKB, m.StackKB, m.Goroutines)
		}
	}
}
