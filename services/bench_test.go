package services_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parley/internal/testkit"
	"parley/migrations/dbtest"
	"parley/services"
)

// Benchmarks of the hot paths, on each database:
//
//	go test -run '^$' -bench . -benchtime 2s ./services
//
// PostgreSQL runs when PARLEY_TEST_DATABASE_URL is set.

func benchDialects(b *testing.B, fn func(b *testing.B, w *world)) {
	benchDialectsWith(b, func(*services.Limits) {}, fn)
}

// benchDialectsWith is benchDialects with limits changed by set.
func benchDialectsWith(b *testing.B, set func(*services.Limits), fn func(b *testing.B, w *world)) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		b.Run(dialect, func(b *testing.B) {
			if dialect == "postgres" && os.Getenv(dbtest.EnvURL) == "" {
				b.Skip("set " + dbtest.EnvURL)
			}
			db := dbtest.Fresh(b, dialect)
			// The guard pauses a thread after 100 model messages in a row
			// (docs/protocol.md §14 rule 3); the read benchmark's tree is longer.
			lim := services.DefaultLimits()
			lim.GuardThreadRunMax = 1000
			set(&lim)
			w := &world{db: db, forum: services.New(db, services.Config{Limits: lim}), ctx: context.Background()}
			fn(b, w)
		})
	}
}

func benchAgent(b *testing.B, w *world, handle string) services.Caller {
	tok, err := w.forum.CreateToken(w.ctx, services.TokenRequest{Handle: handle, Rights: []services.Right{services.RightRead, services.RightWrite}})
	if err != nil {
		b.Fatal(err)
	}
	who, err := w.forum.Authenticate(w.ctx, tok.Secret)
	if err != nil {
		b.Fatal(err)
	}
	return who
}

func benchPost(b *testing.B, w *world, who services.Caller, raw string) services.Posted {
	p, err := w.forum.Post(w.ctx, who, []byte(raw))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkPost measures one answer: parse, lock, insert, state, event.
func BenchmarkPost(b *testing.B) {
	benchDialects(b, func(b *testing.B, w *world) {
		alice, bob := benchAgent(b, w, "alice"), benchAgent(b, w, "bob")
		th := ""
		b.ResetTimer()
		defer testkit.CPUPerOp(b)()
		for i := range b.N {
			if i%90 == 0 { // a new thread before the guard's run limit
				b.StopTimer()
				th = benchPost(b, w, alice, fmt.Sprintf(`{"kind":"ask","body":"bench %d"}`, i)).Thread.ID
				b.StartTimer()
			}
			benchPost(b, w, bob, fmt.Sprintf(`{"kind":"answer","thread":%q,"body":"answer %d, of ordinary length for a benchmark"}`, th, i))
		}
	})
}

// BenchmarkOpenThread measures an ask that opens a thread: the thread, its
// root message, its first event and the thread's update (on PostgreSQL
// two round trips: services/post_open_later.go). Each body differs, so
// that the guard's rule across threads lets it through.
func BenchmarkOpenThread(b *testing.B) {
	benchDialects(b, func(b *testing.B, w *world) {
		alice := benchAgent(b, w, "alice")
		b.ResetTimer()
		defer testkit.CPUPerOp(b)()
		for i := range b.N {
			benchPost(b, w, alice, fmt.Sprintf(`{"kind":"ask","body":"Which option, question %d?"}`, i))
		}
	})
}

// BenchmarkPost16Writers is BenchmarkPost with 16 writers at once, each
// an agent of its own answering in threads of its own (on SQLite, writers
// queue for the one write lock): posts per second, and each post's time
// from call to answer at the 50th and 99th percentiles.
func BenchmarkPost16Writers(b *testing.B) {
	const writers = 16
	benchDialectsWith(b, func(l *services.Limits) { l.PostsPerMinute, l.RequestsPerMinute = 1<<30, 1<<30 }, func(b *testing.B, w *world) {
		agents := make([][2]services.Caller, writers)
		for i := range agents {
			agents[i] = [2]services.Caller{benchAgent(b, w, fmt.Sprintf("asker%d", i)), benchAgent(b, w, fmt.Sprintf("answerer%d", i))}
		}
		var next atomic.Int64
		took := make([][]time.Duration, writers)
		b.ResetTimer()
		defer testkit.CPUPerOp(b)()
		start := time.Now()
		var wg sync.WaitGroup
		for wr := range writers {
			wg.Go(func() {
				asker, answerer := agents[wr][0], agents[wr][1]
				th, n := "", 0
				for next.Add(1) <= int64(b.N) {
					if n%90 == 0 { // a new thread before the guard's run limit
						p, err := w.forum.Post(w.ctx, asker, fmt.Appendf(nil, `{"kind":"ask","body":"bench %d of %d"}`, n, wr))
						if err != nil {
							b.Error(err) // not Fatal: this is not the benchmark's goroutine
							return
						}
						th = p.Thread.ID
					}
					t0 := time.Now()
					_, err := w.forum.Post(w.ctx, answerer, fmt.Appendf(nil, `{"kind":"answer","thread":%q,"body":"answer %d of %d, of ordinary length for a benchmark"}`, th, n, wr))
					if err != nil {
						b.Error(err)
						return
					}
					took[wr] = append(took[wr], time.Since(t0))
					n++
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		all := slices.Concat(took...)
		if len(all) == 0 {
			return
		}
		slices.Sort(all)
		b.ReportMetric(float64(len(all))/elapsed.Seconds(), "posts/s")
		b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
	})
}

// BenchmarkPostPartyBodies is BenchmarkPost with the rule of duplicates
// across threads (§14 rule 1, errata 2) off and at the reference's 50
// bodies, in one run: the rule's cost is the ratio of the two, its probe
// being read with the parent in the same statement.
func BenchmarkPostPartyBodies(b *testing.B) {
	for _, n := range []int{0, 50} {
		b.Run(fmt.Sprintf("party_bodies=%d", n), func(b *testing.B) {
			benchDialectsWith(b, func(l *services.Limits) { l.GuardRecentBodiesParty = n }, func(b *testing.B, w *world) {
				alice, bob := benchAgent(b, w, "alice"), benchAgent(b, w, "bob")
				th := ""
				b.ResetTimer()
				for i := range b.N {
					if i%90 == 0 {
						b.StopTimer()
						th = benchPost(b, w, alice, fmt.Sprintf(`{"kind":"ask","body":"bench %d"}`, i)).Thread.ID
						b.StartTimer()
					}
					benchPost(b, w, bob, fmt.Sprintf(`{"kind":"answer","thread":%q,"body":"answer %d, of ordinary length for a benchmark"}`, th, i))
				}
			})
		})
	}
}

// BenchmarkReadThread reads a 200-message tree, 8 levels deep.
func BenchmarkReadThread(b *testing.B) {
	benchDialects(b, func(b *testing.B, w *world) {
		alice, bob := benchAgent(b, w, "alice"), benchAgent(b, w, "bob")
		root := benchPost(b, w, alice, `{"kind":"ask","body":"bench"}`)
		th, parent, author := root.Thread.ID, root.Message.ID, alice
		for i := 1; i < 200; i++ {
			if i%8 == 0 {
				parent, author = root.Message.ID, alice
			}
			who := alice
			if author.Identity == alice.Identity {
				who = bob
			}
			parent = benchPost(b, w, who, fmt.Sprintf(`{"kind":"note","thread":%q,"parent":%q,"body":"message %d"}`, th, parent, i)).Message.ID
			author = who
		}
		b.ResetTimer()
		defer testkit.CPUPerOp(b)()
		for range b.N {
			if _, err := w.forum.ReadThread(w.ctx, bob, services.ThreadQuery{Thread: th}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInbox reads a page of 50 from 1000 open threads.
func BenchmarkInbox(b *testing.B) {
	benchDialects(b, func(b *testing.B, w *world) {
		alice, bob := benchAgent(b, w, "alice"), benchAgent(b, w, "bob")
		for i := range 1000 { // bodies of their own: the forum refuses a duplicate_body
			benchPost(b, w, alice, fmt.Sprintf(`{"kind":"ask","body":"who, %d?"}`, i))
		}
		b.ResetTimer()
		defer testkit.CPUPerOp(b)()
		for range b.N {
			in, err := w.forum.Inbox(w.ctx, bob, services.InboxQuery{})
			if err != nil || len(in.Items) != 50 {
				b.Fatal(err, len(in.Items))
			}
		}
	})
}

// BenchmarkFanout is one ask to anyone waking fanoutWaiters waiting inbox
// calls of this process (issue 31, item 3), through the services alone:
// ns/op is the wake of all of them, from the post to the last answer;
// reads/op the shared reads that served them (one per round of woken
// waiters, not one per waiter); ns/waiter and cpu-ns/waiter the wake's
// time and this process's CPU per waiting call. The waiting calls are started and in their wait before
// the timer runs, as many per token as waits_per_token allows.
func BenchmarkFanout(b *testing.B) {
	benchDialects(b, func(b *testing.B, w *world) {
		per := w.forum.Limits().WaitsPerToken
		callers := make([]services.Caller, fanoutWaiters/per+1)
		for i := range callers {
			callers[i] = benchAgent(b, w, fmt.Sprintf("waiter%d", i))
		}
		asker := benchAgent(b, w, "asker")
		var reads int64
		var took, cpu time.Duration
		b.ResetTimer()
		for i := range b.N {
			b.StopTimer()
			since, err := w.forum.CurrentCursor(w.ctx)
			if err != nil {
				b.Fatal(err)
			}
			answers := make([]<-chan services.Inbox, fanoutWaiters)
			for j := range answers {
				answers[j] = waitInbox(w.forum, callers[j/per], services.InboxQuery{Since: since, Wait: "30", Limit: "1"})
			}
			awaitWaits(b, w, fanoutWaiters)
			rounds0, _ := w.forum.FanoutStats()
			b.StartTimer()
			start, cpu0 := time.Now(), testkit.ProcessCPU()
			benchPost(b, w, asker, fmt.Sprintf(`{"kind":"ask","body":"Who is there? %d"}`, i))
			for _, a := range answers {
				if box := <-a; len(box.Items) != 1 {
					b.Fatalf("a waiting call answered %d items", len(box.Items))
				}
			}
			took, cpu = took+time.Since(start), cpu+testkit.ProcessCPU()-cpu0
			rounds, _ := w.forum.FanoutStats()
			reads += rounds - rounds0
		}
		b.ReportMetric(float64(reads)/float64(b.N), "reads/op")
		b.ReportMetric(float64(took.Nanoseconds())/float64(b.N*fanoutWaiters), "ns/waiter")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*fanoutWaiters), "cpu-ns/waiter")
	})
}

// fanoutWaiters is BenchmarkFanout's waiting calls.
const fanoutWaiters = 500

// BenchmarkSearchOldWord searches 100,000 messages for a word found only in
// the oldest 40,000 (SeedPlan.OldWord): a search whose matches are all
// behind the newest messages. On PostgreSQL, with the search index's
// buckets unsealed (every older bucket looked in) and sealed (only those
// whose words hold it: search_seal.go).
func BenchmarkSearchOldWord(b *testing.B) {
	benchDialects(b, func(b *testing.B, w *world) {
		err := w.forum.SeedWith(w.ctx, services.SeedPlan{Threads: 10000, PerThread: 10, OldWord: "vintage", OldThreads: 4000})
		if err != nil {
			b.Fatal(err)
		}
		reader := services.Caller{Identity: "bench:reader", Kind: services.KindLLM, Rights: []services.Right{services.RightRead}}
		search := func(b *testing.B) {
			defer testkit.CPUPerOp(b)()
			for range b.N {
				out, err := w.forum.Search(w.ctx, reader, services.SearchQuery{Q: "vintage"})
				if err != nil {
					b.Fatal(err)
				}
				if len(out.Hits) == 0 {
					b.Fatal("vintage found nowhere: the seed is not as the benchmark expects")
				}
			}
		}
		if w.db.Dialector.Name() != "postgres" {
			b.Run("fts5", search)
			return
		}
		b.Run("unsealed", search)
		for {
			pending, err := w.forum.SealSearchBucketsNow(w.ctx)
			if err != nil {
				b.Fatal(err)
			}
			if !pending {
				break
			}
			time.Sleep(10 * time.Millisecond) // for other transactions to end
		}
		b.Run("sealed", search)
	})
}

// BenchmarkParseEnvelope measures reading a post's envelope strictly (no
// database): the JSON read once, the fields checked.
func BenchmarkParseEnvelope(b *testing.B) {
	forum := services.New(nil, services.Config{Limits: services.DefaultLimits()})
	raw := []byte(`{"parley":"1","kind":"answer","thread":"th_12345","parent":"msg_67890","body":"answer 1, of ordinary length for a benchmark","from":{"extension":"lab"},"idempotency_key":"k-1"}`)
	b.ReportAllocs()
	defer testkit.CPUPerOp(b)()
	for b.Loop() {
		if _, err := forum.ParseEnvelope(raw); err != nil {
			b.Fatal(err)
		}
	}
}
