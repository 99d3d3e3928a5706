package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"parley/services"
)

// What a scenario is measured by, read back from the server as any client
// reads it (read_thread and get_events of every thread the scenario
// touched, and the inboxes of a human and a lock holder), and checked.
//
//   - longest model-only chain: the most messages in a row down one branch
//     that are by models (not lock holders) and carry no mark (a message
//     named by a state, withdraw or confirm event), as rule 2 counts them;
//   - longest model-only run: the most model messages in a row in one
//     thread, in creation order, with no human's or lock holder's message
//     and no confirm between them, as rule 3 counts them;
//   - duplicates through: stored messages whose body, normalized as rule 1
//     does, equals one of the same identity's previous guard_recent_bodies
//     bodies in the thread;
//   - asks overdue: asks with reply_by whose turn was still open when the
//     deadline passed, as the stored tree tells it: no later message that
//     opens a new turn (any act but note, attest and verify) was created by
//     then; escalated: those with an escalate event; in time: escalated
//     within --slack of reply_by; false escalations: escalated asks
//     whose turn had moved in time.

// report is what simulate prints.
type report struct {
	Transport string           `json:"transport"`
	Budget    string           `json:"budget"`
	Server    string           `json:"server"`
	Limits    map[string]int   `json:"limits"`
	Scenarios []scenarioReport `json:"scenarios"`
	OK        bool             `json:"ok"`
}

type scenarioReport struct {
	Name              string         `json:"name"`
	About             string         `json:"about"`
	Seed              uint64         `json:"seed"`
	Agents            int            `json:"agents"`
	Seconds           float64        `json:"seconds"`
	Threads           int            `json:"threads"`
	Posted            int            `json:"posted"`
	Refusals          map[string]int `json:"refusals"`
	GuardRefusals     int            `json:"guard_refusals"`
	LongestChain      int            `json:"longest_model_chain"`
	LongestRun        int            `json:"longest_model_run"`
	PausedThreads     int            `json:"paused_threads"`
	DuplicatesThrough int            `json:"duplicates_through"`
	AsksWithDeadline  int            `json:"asks_with_deadline"`
	AsksOverdue       int            `json:"asks_overdue"`
	Escalated         int            `json:"escalated"`
	EscalatedInTime   int            `json:"escalated_in_time"`
	FalseEscalations  int            `json:"false_escalations"`
	MaxDelayMS        *int64         `json:"max_escalation_delay_ms"`
	InInboxes         int            `json:"overdue_in_human_and_lock_inboxes"`
	PoliteGuard       int            `json:"polite_guard_refusals"`
	RoundAsks         int            `json:"clarify_round_asks"`
	RoundsAnswered    int            `json:"clarify_round_answered"`
	Faults            []string       `json:"faults"`
	Checks            []check        `json:"checks"`
	OK                bool           `json:"ok"`
}

type check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// run plays one scenario, waits out its deadlines without reading, and
// measures it.
func (s *sim) run(ctx context.Context, sc scenario) (scenarioReport, error) {
	rec := newRecord(sc.name, sc.seed)
	start := time.Now()
	if err := sc.play(ctx, s, rec); err != nil && !errors.Is(err, errStopped) {
		rec.fault(err)
	}
	played := time.Since(start)
	// Nothing is read until every deadline lies s.slack behind:
	// only the server's sweep can escalate in time, and a read that found
	// an ask not yet escalated would record it late, and be seen as late.
	var last time.Time
	for _, a := range rec.asks {
		if a.replyBy.After(last) {
			last = a.replyBy
		}
	}
	if wait := time.Until(last.Add(s.slack + 200*time.Millisecond)); wait > 0 {
		time.Sleep(wait)
	}
	r := scenarioReport{Name: sc.name, About: sc.about, Seed: sc.seed, Agents: len(rec.agents),
		Seconds: played.Round(10 * time.Millisecond).Seconds(), Posted: rec.count, Refusals: rec.refusals,
		PoliteGuard: rec.polite, Faults: rec.faults}
	if r.Faults == nil {
		r.Faults = []string{}
	}
	for reason, n := range rec.refusals {
		if guardReason(reason) {
			r.GuardRefusals += n
		}
	}
	if err := s.measure(ctx, rec, &r); err != nil {
		return r, err
	}
	s.judge(&r)
	return r, nil
}

// measure reads every thread the scenario touched.
func (s *sim) measure(ctx context.Context, rec *record, r *scenarioReport) error {
	escalations := map[string]time.Time{} // ask message → when it escalated
	facts := map[string]threadFacts{}
	threads := slices.Sorted(maps.Keys(rec.threads))
	r.Threads = len(threads)
	for _, id := range threads {
		f, err := s.readThread(ctx, id)
		if err != nil {
			return err
		}
		facts[id] = f
		r.LongestChain = max(r.LongestChain, f.longestChain())
		r.LongestRun = max(r.LongestRun, f.longestRun())
		r.DuplicatesThrough += f.duplicates(s.limits["guard_recent_bodies"])
		if f.guard == "paused" {
			r.PausedThreads++
		}
		if asker, ok := rec.rounds[id]; ok {
			r.RoundAsks++
			if f.state == "answered" && f.awaiting == asker {
				r.RoundsAnswered++
			}
		}
		maps.Copy(escalations, f.escalations)
	}
	inboxes, err := s.escalatedInboxes(ctx)
	if err != nil {
		return err
	}
	for _, a := range rec.asks {
		r.AsksWithDeadline++
		overdue := facts[a.thread].openAt(a.message, a.replyBy)
		at, escalated := escalations[a.message]
		if overdue {
			r.AsksOverdue++
			if inboxes[a.thread] == 2 {
				r.InInboxes++
			}
		}
		if !escalated {
			continue
		}
		r.Escalated++
		if !overdue {
			r.FalseEscalations++
		}
		delay := at.Sub(a.replyBy)
		if delay <= s.slack {
			r.EscalatedInTime++
		}
		if ms := delay.Milliseconds(); r.MaxDelayMS == nil || ms > *r.MaxDelayMS {
			r.MaxDelayMS = &ms
		}
	}
	return nil
}

// escalatedInboxes counts, per thread, in how many of the two inboxes (the
// human's, the lock holder's) it stands.
func (s *sim) escalatedInboxes(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	for _, who := range []*agent{s.human, s.warden} {
		since := ""
		for {
			args := map[string]any{"limit": 200}
			if since != "" {
				args["since"] = since
			}
			body, ref, err := who.api.do(ctx, "inbox", args)
			if err != nil || ref != nil {
				return nil, fmt.Errorf("inbox of %s: %v %v", who.identity, err, ref)
			}
			items := digList(body, "items")
			for _, it := range items {
				if digString(it, "thread", "overdue_since") != "" {
					out[digString(it, "thread", "id")]++
				}
			}
			if len(items) < 200 {
				break
			}
			since = digString(body, "cursor")
		}
	}
	return out, nil
}

// threadFacts is what measuring needs of one thread.
type threadFacts struct {
	guard       string
	state       string    // the thread's current state, a proposal included
	awaiting    string    // the identity the thread awaits
	messages    []message // in creation order
	confirms    []time.Time
	marked      map[string]bool
	escalations map[string]time.Time
}

type message struct {
	id, parent, identity, body, kind string
	model                            bool // by a model that does not hold lock
	at                               time.Time
}

func (s *sim) readThread(ctx context.Context, id string) (threadFacts, error) {
	obs := s.observer()
	body, ref, err := obs.do(ctx, "read_thread", map[string]any{"thread": id})
	if err != nil || ref != nil {
		return threadFacts{}, fmt.Errorf("read_thread %s: %v %v", id, err, ref)
	}
	f := threadFacts{guard: digString(body, "thread", "guard"), state: digString(body, "thread", "state"),
		awaiting: digString(body, "thread", "awaiting", "identity"), marked: map[string]bool{}, escalations: map[string]time.Time{}}
	var walk func(items []any)
	walk = func(items []any) {
		for _, it := range items {
			at, _ := time.Parse(time.RFC3339Nano, digString(it, "created_at"))
			f.messages = append(f.messages, message{
				id: digString(it, "id"), parent: digString(it, "parent"), identity: digString(it, "from", "identity"),
				body: digString(it, "body"), kind: digString(it, "kind"), at: at,
				model: digString(it, "author_kind") == "llm" && digString(it, "from", "badge") == "",
			})
			walk(digList(it, "replies"))
		}
	}
	walk(digList(body, "messages"))
	sort.Slice(f.messages, func(i, j int) bool { return keyNumber(f.messages[i].id) < keyNumber(f.messages[j].id) })
	since := ""
	for {
		args := map[string]any{"thread": id, "limit": 200}
		if since != "" {
			args["since"] = since
		}
		page, ref, err := obs.do(ctx, "get_events", args)
		if err != nil || ref != nil {
			return threadFacts{}, fmt.Errorf("get_events %s: %v %v", id, err, ref)
		}
		events := digList(page, "events")
		for _, e := range events {
			msg := digString(e, "message")
			at, _ := time.Parse(time.RFC3339Nano, digString(e, "at"))
			switch typ := digString(e, "type"); {
			case typ == "state" && dig(e, "from_state") == nil:
				// A thread's initial open: no mark (docs/protocol.md §5).
			case typ == "escalate":
				f.escalations[msg] = at
			case typ == "confirm" && msg == "":
				f.confirms = append(f.confirms, at)
			case msg != "" && (typ == "state" || typ == "withdraw" || typ == "confirm"):
				f.marked[msg] = true
			}
		}
		if len(events) < 200 {
			break
		}
		since = digString(page, "cursor")
	}
	return f, nil
}

func keyNumber(key string) int {
	_, n, _ := strings.Cut(key, "_")
	v, _ := strconv.Atoi(n)
	return v
}

// openAt reports whether the turn ask opened was still open at t: no
// later message that opens a turn was created before t (at t the server
// already counts the turn overdue).
func (f threadFacts) openAt(ask string, t time.Time) bool {
	for _, m := range f.messages {
		carries := m.kind == "note" || m.kind == "attest" || m.kind == "verify"
		if keyNumber(m.id) > keyNumber(ask) && !carries && m.at.Before(t) {
			return false
		}
	}
	return true
}

// longestChain: rule 2's count, down every branch.
func (f threadFacts) longestChain() int {
	chain, longest := map[string]int{}, 0
	for _, m := range f.messages {
		if m.model && !f.marked[m.id] {
			chain[m.id] = chain[m.parent] + 1
		}
		longest = max(longest, chain[m.id])
	}
	return longest
}

// longestRun: rule 3's count, in creation order; a confirm (by a human or a
// lock holder, as only they confirm) resets it where it happened.
func (f threadFacts) longestRun() int {
	run, longest, c := 0, 0, 0
	for _, m := range f.messages {
		for c < len(f.confirms) && f.confirms[c].Before(m.at) {
			run, c = 0, c+1
		}
		if m.model {
			run++
		} else {
			run = 0
		}
		longest = max(longest, run)
	}
	return longest
}

// duplicates: rule 1's count, of what got stored.
func (f threadFacts) duplicates(window int) int {
	seen, n := map[string][]string{}, 0
	for _, m := range f.messages {
		body := services.NormalizeBody(m.body)
		recent := seen[m.identity]
		if m.model && slices.Contains(recent[max(0, len(recent)-window):], body) {
			n++
		}
		seen[m.identity] = append(recent, body)
	}
	return n
}

// judge checks the numbers the issue asks for, by scenario.
func (s *sim) judge(r *scenarioReport) {
	chainMax, runMax := s.limits["guard_chain_max"], s.limits["guard_thread_run_max"]
	add := func(name string, ok bool, format string, args ...any) {
		r.Checks = append(r.Checks, check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
	}
	loops := r.Name == "echo-pair" || r.Name == "cycle-3"
	swarm := r.Name == "swarm"
	add("no faults", len(r.Faults) == 0, "%d transport or script faults", len(r.Faults))
	add("chains within guard_chain_max", r.LongestChain <= chainMax, "longest model-only chain %d, limit %d", r.LongestChain, chainMax)
	add("runs within guard_thread_run_max", r.LongestRun <= runMax, "longest model-only run %d, limit %d", r.LongestRun, runMax)
	add("no duplicate body got through", r.DuplicatesThrough == 0, "%d duplicates stored", r.DuplicatesThrough)
	if loops {
		add("the guard cut the loop's branches", r.Refusals[string(services.LoopSuspected)] > 0, "%d loop_suspected", r.Refusals[string(services.LoopSuspected)])
		add("the guard paused the thread", r.PausedThreads > 0 && r.LongestRun == runMax, "%d paused, longest run %d", r.PausedThreads, r.LongestRun)
	}
	if r.Name == "repeater" {
		add("repeats were refused", r.Refusals[string(services.DuplicateBody)] > 0, "%d duplicate_body", r.Refusals[string(services.DuplicateBody)])
	}
	if r.Name == "silent" || swarm {
		add("every unanswered ask escalated", r.Escalated-r.FalseEscalations == r.AsksOverdue && (r.AsksOverdue > 0 || swarm),
			"%d of %d overdue asks escalated", r.Escalated-r.FalseEscalations, r.AsksOverdue)
		add(fmt.Sprintf("each within %s of its deadline", s.slack), r.EscalatedInTime == r.Escalated, "%d of %d in time, slowest %s", r.EscalatedInTime, r.Escalated, delayText(r.MaxDelayMS))
		add("in a human's and a lock holder's inbox", r.InInboxes == r.AsksOverdue, "%d of %d overdue threads in both", r.InInboxes, r.AsksOverdue)
	}
	if r.Name == "clarify-round" {
		add("every ask ended answered, awaiting its asker", r.RoundAsks > 0 && r.RoundsAnswered == r.RoundAsks,
			"%d of %d asks answered and awaiting the asker", r.RoundsAnswered, r.RoundAsks)
	}
	if r.Name == "polite" || swarm {
		add("polite agents never refused by the guard", r.PoliteGuard == 0, "%d guard refusals of polite agents", r.PoliteGuard)
		add("no ask answered in time escalated", r.FalseEscalations == 0, "%d false escalations", r.FalseEscalations)
	}
	r.OK = true
	for _, c := range r.Checks {
		r.OK = r.OK && c.OK
	}
}

func delayText(ms *int64) string {
	if ms == nil {
		return "-"
	}
	return fmt.Sprintf("%d ms", *ms)
}

// table prints the report for people.
func (rep report) table(out io.Writer) error {
	fmt.Fprintf(out, "parley-lab simulate: %s, %s budget, %s; guard_chain_max %d, guard_thread_run_max %d, guard_recent_bodies %d\n\n",
		rep.Server, rep.Budget, rep.Transport, rep.Limits["guard_chain_max"], rep.Limits["guard_thread_run_max"], rep.Limits["guard_recent_bodies"])
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "scenario\tseed\tagents\tthreads\tposted\trefusals by reason\tlongest chain\tlongest run\tpaused\tdupes through\tdeadline asks\toverdue\tescalated\tslowest\tpolite guard refusals\tok")
	for _, r := range rep.Scenarios {
		polite := "-"
		if r.Name == "polite" || r.Name == "swarm" {
			polite = strconv.Itoa(r.PoliteGuard)
		}
		ok := "yes"
		if !r.OK {
			ok = "NO"
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", r.Name, r.Seed, r.Agents, r.Threads, r.Posted,
			refusalText(r.Refusals), r.LongestChain, r.LongestRun, r.PausedThreads, r.DuplicatesThrough, r.AsksWithDeadline,
			r.AsksOverdue, r.Escalated, delayText(r.MaxDelayMS), polite, ok)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, r := range rep.Scenarios {
		for _, c := range r.Checks {
			if !c.OK {
				fmt.Fprintf(out, "\nFAILED %s: %s (%s)", r.Name, c.Name, c.Detail)
			}
		}
		for _, f := range r.Faults {
			fmt.Fprintf(out, "\nfault in %s: %s", r.Name, f)
		}
	}
	fmt.Fprintln(out)
	return nil
}

func refusalText(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
