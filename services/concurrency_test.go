package services_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"parley/migrations/dbtest"
	"parley/models"
	"parley/services"
)

// TestConcurrentActsOnOneThread races answer, decide, confirm, mark and
// reopen on one thread from 50 goroutines. Afterwards the event log must be
// one valid path through the state machine (no two transitions from the
// same state) and every accepted message must be stored.
func TestConcurrentActsOnOneThread(t *testing.T) {
	for _, dialect := range []string{"postgres", "sqlite"} {
		t.Run(dialect, func(t *testing.T) {
			db := dbtest.Fresh(t, dialect)
			w := &world{t: t, db: db, forum: services.New(db, services.Config{}), ctx: context.Background()}
			creator := w.agent("creator")
			mod := w.agent("mod", services.RightRead, services.RightWrite, services.RightLock)
			ada := w.human("ada")
			var workers []services.Caller
			for i := range 5 {
				workers = append(workers, w.agent(fmt.Sprintf("worker%d", i)))
			}
			th := w.must(creator, env{"kind": "ask", "body": "Race?"}).Thread.ID

			type job struct {
				who  services.Caller
				e    env
				conf string // for confirm jobs: the state to confirm
			}
			var jobs []job
			for i := range 50 {
				switch i % 5 {
				case 0, 1:
					jobs = append(jobs, job{who: workers[i%5], e: env{"kind": "answer", "thread": th, "body": "answer", "from": map[string]string{"extension": fmt.Sprint("e", i)}}})
				case 2:
					jobs = append(jobs, job{who: creator, e: env{"kind": "decide", "thread": th, "body": "decide"}})
				case 3:
					jobs = append(jobs, job{who: mod, conf: []string{"answered", "decided", "closed"}[i%3]})
				case 4:
					states := []string{"open", "closed", "open", "deferred"}
					jobs = append(jobs, job{who: ada, e: env{"kind": "mark", "thread": th, "state": states[(i/5)%4], "body": "mark"}})
				}
			}
			for range 5 {
				jobs = append(jobs, job{who: mod, e: env{"kind": "reopen", "thread": th, "body": "reopen"}})
			}

			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				accepted int
				start    = make(chan struct{})
			)
			for _, j := range jobs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					var err error
					if j.conf != "" {
						_, err = w.forum.Confirm(w.ctx, j.who, th, []byte(`{"state":"`+j.conf+`"}`))
					} else {
						_, err = w.post(j.who, j.e)
						if err == nil {
							mu.Lock()
							accepted++
							mu.Unlock()
						}
					}
					if r, unexpected := services.AsRefusal(err); err != nil && unexpected {
						t.Errorf("unexpected fault under contention: %v (%s)", err, r.Reason)
					}
				}()
			}
			close(start)
			wg.Wait()

			final := w.thread(th).Thread
			if final.MessageCount != accepted+1 {
				t.Fatalf("message_count %d, want %d accepted + the root", final.MessageCount, accepted)
			}
			var stored int64
			db.Model(&models.Message{}).Where("thread_id = ?", final.ID[3:]).Count(&stored)
			if int(stored) != accepted+1 {
				t.Fatalf("%d messages stored, %d accepted + root", stored, accepted)
			}
			t.Logf("%d of %d posts accepted", accepted, len(jobs)-10)
			checkPath(t, w, th, final)
		})
	}
}

// checkPath verifies the event log of a thread is one path through the
// state machine of docs/protocol.md §5.
func checkPath(t *testing.T, w *world, th string, final services.Thread) {
	t.Helper()
	var events []services.Event
	since, reader := "", w.agent("path-reader", services.RightRead)
	for {
		page, err := w.forum.Events(w.ctx, reader, services.EventsQuery{Thread: th, Since: since, Limit: "200"})
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, page.Events...)
		if len(page.Events) == 0 {
			break
		}
		since = page.Cursor
	}
	if len(events) < 3 {
		t.Fatalf("only %d events: the race did nothing", len(events))
	}
	got, err := replay(events)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d events on one path, ending %s", len(events), got.state)
	if err := got.matches(final); err != nil {
		t.Fatal(err)
	}
}
