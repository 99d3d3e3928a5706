package client_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"parley/client"
	"parley/internal/testkit"
)

// The agent process of TestFollowSurvivesKills: the test binary run again
// with agentEnv set. It follows its inbox with a FileStore and answers
// every turn, logging each handling before it posts ("handle") and each
// post after ("posted"), in a file opened for appending: the handler's
// side effects, counted by the test. It kills itself with SIGKILL where
// CLIENT_TEST_DIE says: "before-post:N" (its N-th turn, after logging,
// before posting) or "after-post:N" (after the post, before the handler
// returns and the cursor is saved).
func TestAgentProcess(t *testing.T) {
	if os.Getenv(agentEnv) == "" {
		t.Skip("the agent process of TestFollowSurvivesKills")
	}
	log, err := os.OpenFile(os.Getenv("CLIENT_TEST_LOG"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	where, at, _ := strings.Cut(os.Getenv("CLIENT_TEST_DIE"), ":")
	dieAt, _ := strconv.Atoi(at)
	die := func(point string, n int) {
		if point == where && n == dieAt {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	c := client.New(os.Getenv("PARLEY_URL"), os.Getenv("PARLEY_TOKEN"))
	n := 0
	err = c.Follow(context.Background(), func(ctx context.Context, turn *client.Turn) error {
		n++
		fmt.Fprintf(log, "handle %s %s\n", turn.Thread.ID, turn.Message.ID)
		die("before-post", n)
		out, err := turn.Post(ctx, client.Answer(turn.Message, "The answer to "+turn.Message.ID+"."))
		if err != nil {
			return err
		}
		fmt.Fprintf(log, "posted %s %s %v\n", turn.Thread.ID, out.Message.ID, out.Replayed)
		die("after-post", n)
		return nil
	}, client.FollowOptions{Store: client.FileStore{Dir: os.Getenv("CLIENT_TEST_STORE")}})
	t.Fatal(err)
}

// TestFollowSurvivesKills: an agent answers the questions of 16 writers,
// who ask to it concurrently and ask again as soon as it answered, while
// its process is killed again and again (SIGKILL: before it posts, after
// it posted but before its cursor is saved, and from outside at any
// moment) and restarted on the same FileStore; its posts go through a
// proxy that loses the answer of every fifth. Counted at the end: every
// question answered exactly once in the forum, every turn handled, a turn
// handled twice only where a process died handling it, and the lost
// answers replayed rather than stored again.
func TestFollowSurvivesKills(t *testing.T) {
	const writers, rounds = 16, 6 // each writer asks rounds questions, one after the other
	eachDB(t, []string{"--posts-per-minute", "100000", "--requests-per-minute", "1000000"}, func(t *testing.T, s *server) {
		agentToken := s.token(t, "agent", "read,write")
		proxy := newFaultProxy(t, s.URL, func(n int) fault {
			if n%5 == 0 {
				return loseAnswer
			}
			return pass
		})
		dir := t.TempDir()
		logPath, store := filepath.Join(dir, "handled.log"), filepath.Join(dir, "cursors")

		// The writers: ask, wait for the answer in the inbox, ask again.
		var wg sync.WaitGroup
		var mu sync.Mutex
		asked := map[string]string{} // thread → writer
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		errs := make(chan error, writers)
		for w := range writers {
			c := client.New(s.URL, s.token(t, fmt.Sprintf("w%02d", w), "read,write"))
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- writer(ctx, c, w, rounds, func(th string) { mu.Lock(); asked[th] = fmt.Sprint(w); mu.Unlock() })
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()

		// The agent, killed and restarted until the writers are done.
		plan := []string{"before-post:3", "after-post:4", "outside:10", "before-post:1", "after-post:1", "outside:25"}
		deaths := 0
		for i := 0; ; i++ {
			die := "none"
			if i < len(plan) {
				die = plan[i]
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestAgentProcess$")
			cmd.Env = append(testkit.CleanEnv(), agentEnv+"=1", "PARLEY_URL="+proxy.URL(), "PARLEY_TOKEN="+agentToken,
				"CLIENT_TEST_LOG="+logPath, "CLIENT_TEST_STORE="+store, "CLIENT_TEST_DIE="+die)
			out := &testkit.SyncBuffer{}
			cmd.Stdout, cmd.Stderr = out, out
			before := len(readLog(t, logPath))
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			if after, ok := strings.CutPrefix(die, "outside:"); ok {
				n, _ := strconv.Atoi(after)
				waitFor(t, exited, func() bool { return len(readLog(t, logPath)) >= before+n }, out)
				cmd.Process.Signal(syscall.SIGKILL)
			}
			if die == "none" {
				select {
				case <-done:
				case err := <-exited:
					t.Fatalf("the last agent exited: %v\n%s", err, out.String())
				case <-time.After(3 * time.Minute):
					t.Fatalf("the writers were not all answered in 3 minutes\n%s", out.String())
				}
				cmd.Process.Signal(syscall.SIGKILL)
				<-exited
				break
			}
			select {
			case err := <-exited:
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
					t.Fatalf("agent %d (%s) exited otherwise than killed: %v\n%s", i, die, err, out.String())
				}
			case <-time.After(3 * time.Minute):
				t.Fatalf("agent %d (%s) did not die\n%s", i, die, out.String())
			}
			deaths++
		}
		cancel()
		for range writers {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}

		// Count.
		handled, posted, replayed := map[string]int{}, map[string]int{}, 0
		for _, line := range readLog(t, logPath) {
			f := strings.Fields(line)
			switch {
			case f[0] == "handle":
				handled[f[1]]++
			case f[0] == "posted":
				posted[f[1]]++
				if f[3] == "true" {
					replayed++
				}
			}
		}
		reader := client.New(s.URL, agentToken)
		twice := 0
		for th := range asked {
			view, err := reader.ReadThread(t.Context(), th, client.ThreadQuery{})
			if err != nil {
				t.Fatal(err)
			}
			answers := 0
			view.Walk(func(m *client.Message) {
				if m.From.Identity == "ainotes:agent" {
					answers++
				}
			})
			if answers != 1 || view.Thread.MessageCount != 2 {
				t.Errorf("%s: %d answers by the agent, %d messages; want 1 and 2", th, answers, view.Thread.MessageCount)
			}
			if handled[th] == 0 {
				t.Errorf("%s: never handled", th)
			}
			if handled[th] > 1 {
				twice++
			}
		}
		if len(asked) != writers*rounds {
			t.Errorf("%d questions asked, want %d", len(asked), writers*rounds)
		}
		if twice > deaths {
			t.Errorf("%d turns handled more than once, with %d deaths", twice, deaths)
		}
		posts, faults := proxy.counts()
		if faults[loseAnswer] == 0 || replayed == 0 {
			t.Errorf("%d answers lost, %d posts replayed: the test lost nothing", faults[loseAnswer], replayed)
		}
		t.Logf("%d questions from %d writers, %d agent deaths: %d turns handled twice (each by a process that died handling it); "+
			"%d posts through the proxy, %d answers lost, %d posts replayed; one answer each in the forum",
			len(asked), writers, deaths, twice, posts, faults[loseAnswer], replayed)
	})
}

// writer asks the agent rounds questions, each after the answer to the
// last came to its inbox, and calls asked with each thread.
func writer(ctx context.Context, c *client.Client, w, rounds int, asked func(string)) error {
	cursor := ""
	for r := range rounds {
		out, err := c.Post(ctx, client.Ask(fmt.Sprintf("Writer %d, question %d: which port?", w, r)).WithTo("ainotes:agent", ""))
		if err != nil {
			return fmt.Errorf("writer %d: %w", w, err)
		}
		asked(out.Thread.ID)
		for answered := false; !answered; {
			page, err := c.Inbox(ctx, client.InboxQuery{Since: cursor, Wait: 10 * time.Second})
			if err != nil {
				return fmt.Errorf("writer %d: inbox: %w", w, err)
			}
			cursor = page.Cursor
			for _, it := range page.Items {
				answered = answered || it.Thread.ID == out.Thread.ID && it.Message.Kind == client.KindAnswer
			}
		}
	}
	return nil
}

// readLog is the agent's log, line by line.
func readLog(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); strings.Count(line, " ") >= 2 {
			lines = append(lines, line)
		}
	}
	return lines
}

// waitFor waits until cond holds, failing if the agent exits first or
// nothing happens for a long while.
func waitFor(t *testing.T, exited chan error, cond func() bool, out *testkit.SyncBuffer) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !cond() {
		select {
		case err := <-exited:
			t.Fatalf("the agent exited: %v\n%s", err, out.String())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent made no progress in 3 minutes\n%s", out.String())
		}
	}
}

// TestFollowRidesOutAnOutage: while everything the agent sends is answered
// 503 unavailable, questions keep coming; once the outage ends, Follow,
// which never stopped, answers each of them once, and those from before.
func TestFollowRidesOutAnOutage(t *testing.T) {
	eachDB(t, nil, func(t *testing.T, s *server) {
		agentToken := s.token(t, "agent", "read,write")
		asker := client.New(s.URL, s.token(t, "asker", "read,write"))
		proxy := newFaultProxy(t, s.URL, func(int) fault { return pass })
		agent := client.New(proxy.URL(), agentToken,
			client.WithRetry(client.Retry{Attempts: 2, Base: 5 * time.Millisecond, Max: 50 * time.Millisecond}))
		answered := make(chan string, 100)
		ctx, cancel := context.WithCancel(t.Context())
		followed := make(chan error, 1)
		go func() {
			followed <- agent.Follow(ctx, func(ctx context.Context, turn *client.Turn) error {
				_, err := turn.Post(ctx, client.Answer(turn.Message, "Answered: "+turn.Message.ID))
				if err == nil {
					answered <- turn.Thread.ID
				}
				return err
			}, client.FollowOptions{Wait: time.Second})
		}()
		ask := func(i int) string {
			out, err := asker.Post(t.Context(), client.Ask(fmt.Sprintf("Question %d?", i)).WithTo("ainotes:agent", ""))
			if err != nil {
				t.Fatal(err)
			}
			return out.Thread.ID
		}
		got := map[string]int{}
		receive := func(n int) {
			for range n {
				select {
				case th := <-answered:
					got[th]++
				case err := <-followed:
					t.Fatalf("Follow returned: %v", err)
				case <-time.After(2 * time.Minute):
					t.Fatalf("only %d answers", len(got))
				}
			}
		}
		var asked []string
		for i := range 3 {
			asked = append(asked, ask(i))
		}
		receive(3)
		proxy.down.Store(true)
		for i := 3; i < 8; i++ {
			asked = append(asked, ask(i))
		}
		for deadline := time.Now().Add(2 * time.Minute); proxy.refused.Load() < 10; {
			if time.Now().After(deadline) {
				t.Fatal("the agent sent nothing during the outage")
			}
			select {
			case err := <-followed:
				t.Fatalf("Follow returned during the outage: %v", err)
			case <-time.After(5 * time.Millisecond):
			}
		}
		proxy.down.Store(false)
		receive(5)
		cancel()
		if err := <-followed; !errors.Is(err, context.Canceled) {
			t.Errorf("Follow returned %v", err)
		}
		for _, th := range asked {
			if got[th] != 1 {
				t.Errorf("%s answered %d times", th, got[th])
			}
		}
		t.Logf("%d requests refused during the outage; %d questions answered once each", proxy.refused.Load(), len(asked))
	})
}
