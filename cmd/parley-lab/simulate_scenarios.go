package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"parley/services"
)

// scenario is one scripted situation with a fixed seed: the seed picks the
// agents' words, acts and pauses, so two runs send the same conversations
// (the swarm's interleaving aside).
type scenario struct {
	name  string
	seed  uint64
	about string
	play  func(ctx context.Context, s *sim, rec *record) error
}

var scenarios = []scenario{
	{"echo-pair", 1101, "two agents that always reply to each other's last message", playEchoPair},
	{"cycle-3", 1103, "A→B→C→A, each answering the previous one", playCycle3},
	{"repeater", 1105, "an agent re-posting the same bodies with small whitespace or case changes", playRepeater},
	{"silent", 1107, "asks with reply_by addressed to agents that never answer", playSilent},
	{"polite", 1109, "a realistic team (ask, clarify, answer, object, decide, confirm, notes): the false-positive control", playPolite},
	{"clarify-round", 1113, "clarify rounds, nested up to three deep, each unwound by answers to the last message: every ask must end answered, awaiting its asker", playClarifyRound},
	{"swarm", 1111, "50 agents mixing all of the above for a fixed time", playSwarm},
}

// playClarifyRound: pairs of agents where the answerer asks back before
// answering (docs/protocol.md §4, errata 2). Each story opens an ask
// addressed to the answerer, then 1 to 3 clarifies alternating between the
// two (a clarify of the clarify, and so on), then as many answers plus one,
// each replying to the last message: every answer after the first answers
// the reply to its author's own clarify, so the last one answers the ask.
// judge requires every ask to end answered and awaiting its asker.
func playClarifyRound(ctx context.Context, s *sim, rec *record) error {
	for pair := range 2 {
		two, err := s.agents(ctx, rec, fmt.Sprintf("pair%d", pair+1), 2, true, false)
		if err != nil {
			return err
		}
		asker, answerer := two[0], two[1]
		for story := range s.budget.politeStories {
			if err := clarifyRound(ctx, asker, answerer, pair*100+story, story%3+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// clarifyRound is one story of playClarifyRound with depth clarifies.
func clarifyRound(ctx context.Context, asker, answerer *agent, story, depth int) error {
	step := func(a *agent, env map[string]any) (string, string, error) {
		msg, thread, ref, err := a.post(ctx, env)
		if err == nil && ref != nil {
			err = fmt.Errorf("%s was refused: %s (%s)", env["kind"], ref.Reason, ref.Message)
		}
		return msg, thread, err
	}
	last, thread, err := step(asker, map[string]any{"kind": "ask", "to": map[string]any{"identity": answerer.identity},
		"body": fmt.Sprintf("Story %d: which settings should the release use?", story+1)})
	if err != nil {
		return err
	}
	asker.rec.round(thread, asker.identity)
	turn := []*agent{answerer, asker}
	for k := range depth {
		if last, _, err = step(turn[k%2], map[string]any{"kind": "clarify", "thread": thread, "parent": last,
			"body": fmt.Sprintf("Story %d, question back %d: which part do you mean?", story+1, k+1)}); err != nil {
			return err
		}
	}
	for k := range depth + 1 {
		a := turn[(depth+k)%2] // the other party of the last clarify first
		if last, _, err = step(a, map[string]any{"kind": "answer", "thread": thread, "parent": last,
			"body": fmt.Sprintf("Story %d, answer %d: the settings of part %d.", story+1, k+1, depth-k)}); err != nil {
			return err
		}
	}
	return nil
}

// maxLoopAttempts bounds a loop that the guard would fail to stop.
const maxLoopAttempts = 400

func playEchoPair(ctx context.Context, s *sim, rec *record) error {
	pair, err := s.agents(ctx, rec, "echo", 2, false, false)
	if err != nil {
		return err
	}
	_, err = loopUntilStopped(ctx, pair, nil)
	return err
}

func playCycle3(ctx context.Context, s *sim, rec *record) error {
	ring, err := s.agents(ctx, rec, "cycle", 3, false, false)
	if err != nil {
		return err
	}
	_, err = loopUntilStopped(ctx, ring, nil)
	return err
}

// loopUntilStopped opens a thread and has the agents reply in turn, each
// to the previous one's last message, until the guard pauses the thread
// (loop_suspected on the thread) or maxLoopAttempts run out. When the guard
// cuts a branch (loop_suspected on the parent) the next agent that did not
// open the thread starts a new branch at the root, as a model that is told
// "reply higher up" would. It answers whether the guard paused the thread.
func loopUntilStopped(ctx context.Context, ring []*agent, think func(*agent) error) (bool, error) {
	opener := ring[0]
	root, thread, ref, err := opener.post(ctx, map[string]any{"kind": "ask", "body": opener.line(loopQuestions, 0)})
	if err != nil || ref != nil {
		return false, err
	}
	last, turn := root, 1
	for attempt := 1; attempt <= maxLoopAttempts; attempt++ {
		a := ring[turn%len(ring)]
		if think != nil {
			if err := think(a); err != nil {
				return false, err
			}
		}
		kind := []string{"answer", "note", "object", "clarify"}[a.rng.IntN(4)]
		msg, _, ref, err := a.post(ctx, map[string]any{"kind": kind, "thread": thread, "parent": last, "body": a.line(loopReplies, attempt)})
		switch {
		case err != nil:
			return false, err
		case ref == nil:
			last, turn = msg, turn+1
		case ref.Reason == string(services.LoopSuspected) && ref.Field == "thread":
			return true, nil
		case ref.Reason == string(services.LoopSuspected):
			last = root
			if ring[turn%len(ring)] == opener {
				turn++
			}
		default:
			turn++
		}
	}
	return false, nil
}

// playRepeater: an agent that keeps saying the same few things, each time
// with other case or spacing, and now and then something new. It posts from
// an extension, so that its notes on its own question are no self_reply;
// rule 1 looks at the identity, whatever the extension.
func playRepeater(ctx context.Context, s *sim, rec *record) error {
	rs, err := s.agents(ctx, rec, "repeater", 1, false, false)
	if err != nil {
		return err
	}
	return repeat(ctx, rs[0], 40, nil)
}

func repeat(ctx context.Context, r *agent, attempts int, think func(*agent) error) error {
	_, thread, ref, err := r.post(ctx, map[string]any{"kind": "ask", "body": r.line(repeaterQuestions, 0)})
	if err != nil || ref != nil {
		return err
	}
	for i := 1; i <= attempts; i++ {
		if think != nil {
			if err := think(r); err != nil {
				return err
			}
		}
		body := disguise(r.rng, repeated[r.rng.IntN(len(repeated))])
		if r.rng.IntN(4) == 0 {
			body = fmt.Sprintf("Build %d finished in %d minutes.", 1000+i, 10+r.rng.IntN(30))
		}
		_, _, ref, err := r.post(ctx, map[string]any{"kind": "note", "thread": thread, "from": map[string]any{"extension": "relay"}, "body": body})
		if err != nil {
			return err
		}
		if ref != nil && ref.Reason == string(services.LoopSuspected) && ref.Field == "thread" {
			return nil
		}
	}
	return nil
}

// disguise changes a body's case and spacing, never its words.
func disguise(rng *rand.Rand, body string) string {
	switch rng.IntN(6) {
	case 0:
		return strings.ToUpper(body)
	case 1:
		return strings.ToLower(body)
	case 2:
		return "  " + strings.ReplaceAll(body, " ", "   ") + " "
	case 3:
		return strings.ReplaceAll(body, " ", "\t")
	case 4:
		return strings.Replace(body, " ", "\n", 1)
	}
	return body
}

// playSilent: askers put questions with reply_by to agents that never
// answer, then everyone waits without reading until the deadlines are
// past; measuring then finds when each ask escalated.
func playSilent(ctx context.Context, s *sim, rec *record) error {
	askers, err := s.agents(ctx, rec, "asker", 3, false, false)
	if err != nil {
		return err
	}
	targets, err := s.agents(ctx, rec, "mute", 3, false, false)
	if err != nil {
		return err
	}
	start := time.Now()
	for i, a := range askers {
		for k := range 2 {
			due := start.Add(s.budget.deadline + time.Duration(2*i+k)*150*time.Millisecond)
			if err := silentAsk(ctx, a, targets[(i+k)%len(targets)], due); err != nil {
				return err
			}
		}
	}
	return nil
}

// silentAsk puts one question to a target that will never answer.
func silentAsk(ctx context.Context, a, target *agent, due time.Time) error {
	msg, thread, ref, err := a.post(ctx, map[string]any{"kind": "ask", "to": map[string]any{"identity": target.identity},
		"reply_by": due.UTC().Format(time.RFC3339Nano), "body": a.line(silentQuestions, int(due.UnixMilli()%100000))})
	if err != nil || ref != nil {
		return err
	}
	a.rec.ask(&deadlineAsk{thread: thread, message: msg, replyBy: due.UTC().Truncate(time.Microsecond)})
	return nil
}

// playPolite: teams that work as a team should — a lead asks (half the
// time with a reply_by, which the team meets: the turn moves well before
// it, and measuring waits until it has passed), a worker clarifies and
// answers, a reviewer objects or notes, they discuss a few rounds, the lead
// decides, and a steward (a lock holder) confirms or closes. Not one of
// these acts may be refused by the guard.
func playPolite(ctx context.Context, s *sim, rec *record) error {
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for t := range 2 {
		team, err := s.agents(ctx, rec, "team", 3, true, false)
		if err != nil {
			return err
		}
		steward, err := s.agents(ctx, rec, "steward", 1, true, true)
		if err != nil {
			return err
		}
		team = append(team, steward[0])
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Stories numbered across the teams, which may share
			// identities: each thread in its own words.
			for story := range s.budget.politeStories {
				if err := tellStory(ctx, team, t*s.budget.politeStories+story, s.budget.deadline, nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// tellStory is one thread of a polite team: lead, worker, reviewer,
// steward.
func tellStory(ctx context.Context, team []*agent, story int, deadline time.Duration, think func(*agent) error) error {
	lead, worker, reviewer, steward := team[0], team[1], team[2], team[3]
	t := topics[(story+lead.rng.IntN(len(topics)))%len(topics)]
	step := func(a *agent, env map[string]any) (string, error) {
		// Each story in its own words: a polite agent does not paste the
		// same sentence into every thread, which its party's duplicates
		// across threads refuse (PARLEY.md §14 rule 1, errata 2).
		env["body"] = fmt.Sprintf("%s (story %d)", env["body"], story+1)
		if think != nil {
			if err := think(a); err != nil {
				return "", err
			}
		}
		msg, _, ref, err := a.post(ctx, env)
		if err == nil && ref != nil {
			err = fmt.Errorf("%s was refused: %s (%s)", env["kind"], ref.Reason, ref.Message)
		}
		return msg, err
	}
	ask := map[string]any{"kind": "ask", "body": fmt.Sprintf("%s (story %d)", t.question, story+1)}
	var due *deadlineAsk
	if lead.rng.IntN(2) == 0 {
		at := time.Now().Add(deadline).UTC()
		ask["reply_by"] = at.Format(time.RFC3339Nano)
		due = &deadlineAsk{replyBy: at.Truncate(time.Microsecond)}
	}
	if think != nil {
		if err := think(lead); err != nil {
			return err
		}
	}
	q, thread, ref, err := lead.post(ctx, ask)
	if err == nil && ref != nil {
		err = fmt.Errorf("ask was refused: %s", ref.Reason)
	}
	if err != nil {
		return err
	}
	if due != nil {
		due.thread, due.message = thread, q
		lead.rec.ask(due)
	}
	if worker.rng.IntN(2) == 0 {
		c, err := step(worker, map[string]any{"kind": "clarify", "thread": thread, "parent": q, "body": t.clarify})
		if err != nil {
			return err
		}
		if _, err := step(lead, map[string]any{"kind": "answer", "thread": thread, "parent": c, "body": t.precision}); err != nil {
			return err
		}
	}
	answer, err := step(worker, map[string]any{"kind": "answer", "thread": thread, "parent": q, "body": t.answer})
	if err != nil {
		return err
	}
	parent := answer
	for round := range reviewer.rng.IntN(4) {
		kind := []string{"object", "note"}[reviewer.rng.IntN(2)]
		r, err := step(reviewer, map[string]any{"kind": kind, "thread": thread, "parent": parent, "body": fmt.Sprintf("%s (point %d)", t.doubts[round%len(t.doubts)], round+1)})
		if err != nil {
			return err
		}
		if parent, err = step(worker, map[string]any{"kind": "note", "thread": thread, "parent": r, "body": fmt.Sprintf("On point %d: %s", round+1, t.replies[round%len(t.replies)])}); err != nil {
			return err
		}
	}
	if _, err := step(lead, map[string]any{"kind": "decide", "thread": thread, "parent": answer, "body": t.decision}); err != nil {
		return err
	}
	if think != nil {
		if err := think(steward); err != nil {
			return err
		}
	}
	if steward.rng.IntN(3) == 0 {
		_, err = step(steward, map[string]any{"kind": "mark", "thread": thread, "state": "closed", "body": "Closing: decided and recorded in the changelog."})
		return err
	}
	for {
		_, ref, err := steward.api.do(ctx, "confirm", map[string]any{"thread": thread, "state": "decided"})
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return errStopped
			}
			steward.rec.fault(err)
			return err
		case ref == nil:
			return nil
		case ref.Reason != string(services.RateLimited):
			steward.rec.refused(steward, ref)
			return fmt.Errorf("confirm was refused: %s", ref.Reason)
		}
		steward.rec.refused(steward, ref)
		time.Sleep(time.Duration(max(ref.RetryAfter, 1)) * time.Second)
	}
}

// playSwarm: 50 agents at once for the budget's time — 5 echo pairs, 3
// cycles of three, 5 repeaters, 3 silent askers with 3 mute addressees,
// and 5 polite teams of four — each thinking a little between acts.
func playSwarm(ctx context.Context, s *sim, rec *record) error {
	run, stop := context.WithTimeout(ctx, s.budget.swarm)
	defer stop()
	think := func(a *agent) error { return a.think(run, s.budget.think) }
	var wg sync.WaitGroup
	faults := make(chan error, 64)
	spawn := func(loop func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for run.Err() == nil {
				if err := loop(); err != nil && !errors.Is(err, errStopped) {
					faults <- err
					return
				}
			}
		}()
	}
	for range 5 {
		pair, err := s.agents(ctx, rec, "echo", 2, false, false)
		if err != nil {
			return err
		}
		spawn(func() error { _, err := loopUntilStopped(run, pair, think); return err })
	}
	for range 3 {
		ring, err := s.agents(ctx, rec, "cycle", 3, false, false)
		if err != nil {
			return err
		}
		spawn(func() error { _, err := loopUntilStopped(run, ring, think); return err })
	}
	repeaters, err := s.agents(ctx, rec, "repeater", 5, false, false)
	if err != nil {
		return err
	}
	for _, r := range repeaters {
		spawn(func() error { return repeat(run, r, 30, think) })
	}
	askers, err := s.agents(ctx, rec, "asker", 3, false, false)
	if err != nil {
		return err
	}
	mutes, err := s.agents(ctx, rec, "mute", 3, false, false)
	if err != nil {
		return err
	}
	for i, a := range askers {
		spawn(func() error {
			// Stop asking when the deadline would fall after the run.
			if err := a.think(run, [2]time.Duration{time.Second, 2 * time.Second}); err != nil {
				return err
			}
			due := time.Now().Add(s.budget.deadline)
			if dl, _ := run.Deadline(); due.After(dl) {
				<-run.Done()
				return errStopped
			}
			return silentAsk(run, a, mutes[i], due)
		})
	}
	// Stories numbered across the teams, which may share identities: each
	// thread in its own words.
	var stories atomic.Int64
	for range 5 {
		team, err := s.agents(ctx, rec, "team", 3, true, false)
		if err != nil {
			return err
		}
		steward, err := s.agents(ctx, rec, "steward", 1, true, true)
		if err != nil {
			return err
		}
		team = append(team, steward[0])
		spawn(func() error { return tellStory(run, team, int(stories.Add(1)), s.budget.deadline, think) })
	}
	wg.Wait()
	close(faults)
	return <-faults
}

// line is one of an agent's sentences, made its own by n: scripted loops
// never repeat a body, so that rules 2 and 3 are what stops them.
func (a *agent) line(from []string, n int) string {
	return fmt.Sprintf("%s (%s, %d)", from[a.rng.IntN(len(from))], a.name, n)
}

var loopQuestions = []string{
	"Tabs or spaces for the linkd configuration files?",
	"Should the redirect cache live in-process or in Redis?",
	"Is 8443 the right port for the admin API?",
}

var loopReplies = []string{
	"I agree with your last point.",
	"Building on what you said, let me restate it.",
	"As you just noted, that is the key question.",
	"Thanks, that clarifies it; to add to it once more:",
	"Good point. Following up on your reply:",
	"Exactly. And, to your question:",
}

var repeaterQuestions = []string{"Is the nightly build green?", "Did the deploy to staging pass?"}

var repeated = []string{
	"The nightly build is green.",
	"All tests pass on main.",
	"No regressions found in the benchmark run.",
}

var silentQuestions = []string{
	"Please confirm the mirror is in sync before the release.",
	"Can you sign off on the schema change?",
	"Is the incident report for last night ready?",
}

// topic is one polite story's words.
type topic struct {
	question, clarify, precision, answer string
	doubts, replies                      []string
	decision                             string
}

var topics = []topic{
	{"How long should the redirect cache keep an entry?", "Do edits need to show up at once, or is a minute of staleness fine?",
		"A minute is fine for edits; takedowns must be immediate.", "Use a 60 s TTL and purge on delete through LISTEN/NOTIFY.",
		[]string{"Purges can be lost if a replica is restarting.", "What about the memory budget per replica?", "Do we need metrics for hit rate?"},
		[]string{"A replica reloads the deny list on start, so nothing is lost.", "10k entries stay under 4 MB.", "Yes: a counter per hit and miss, exported to Prometheus."},
		"Decided: 60 s TTL, purge on delete, reload on start."},
	{"Which port should the admin API listen on?", "Is it reachable from outside the cluster?",
		"No, only from the ops VPN.", "8443: 443 belongs to the proxy and 8443 is free on every host.",
		[]string{"8443 is used by the metrics sidecar on two hosts.", "Should we bind to localhost only?"},
		[]string{"Those hosts move the sidecar to 9443 this week.", "Binding to the VPN interface is enough."},
		"Decided: 8443 on the VPN interface."},
	{"Do we keep request logs for 30 or 90 days?", "Do the logs contain IP addresses?",
		"Yes, truncated to /24.", "30 days: enough for abuse reports, and less personal data kept.",
		[]string{"Legal asked for 90 days for fraud cases.", "Can we keep aggregates longer?"},
		[]string{"Fraud cases export the relevant lines at once, so 30 days holds.", "Yes, daily counts without addresses can stay a year."},
		"Decided: 30 days raw, one year of aggregates."},
	{"Should short codes be 6 or 7 characters?", "How many links do we expect in three years?",
		"About 50 million.", "7 characters: 62^7 leaves room for collisions to stay rare.",
		[]string{"Longer codes are harder to type from print.", "Do we exclude look-alike characters?"},
		[]string{"Printed links use a QR code anyway.", "Yes: no 0/O and 1/l, which still leaves enough room."},
		"Decided: 7 characters without look-alikes."},
	{"Who is on call for the launch weekend?", "Does on call include the database?",
		"Yes, the database and the proxy.", "Mira on Saturday, Tom on Sunday, with the DBA as backup.",
		[]string{"Tom is travelling on Sunday morning.", "Is the runbook up to date?"},
		[]string{"Tom swaps the morning with Mira.", "Updated yesterday, with the new failover steps."},
		"Decided: Mira Saturday and Sunday morning, Tom Sunday afternoon."},
	{"Do we support custom domains in the first release?", "For paying customers only, or everyone?",
		"Paying customers only.", "Not in the first release: certificates per domain need automation we do not have yet.",
		[]string{"Two customers asked for it in the pilot.", "Could we do it by hand for those two?"},
		[]string{"They agreed to wait for the second release.", "By hand means renewals by hand; too fragile."},
		"Decided: custom domains in release 2."},
}
