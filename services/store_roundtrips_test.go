package services_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"parley/models"
	"parley/services"
)

// countStatements counts the statements GORM sends on w.db while fn runs
// (BEGIN and COMMIT aside).
func countStatements(t *testing.T, w *world, fn func()) int {
	t.Helper()
	var n atomic.Int64
	on := atomic.Bool{}
	count := func(*gorm.DB) {
		if on.Load() {
			n.Add(1)
		}
	}
	cb := w.db.Callback()
	name := fmt.Sprintf("test:count:%p", &n)
	for _, err := range []error{
		cb.Create().After("*").Register(name, count), cb.Query().After("*").Register(name, count),
		cb.Update().After("*").Register(name, count), cb.Delete().After("*").Register(name, count),
		cb.Row().After("*").Register(name, count), cb.Raw().After("*").Register(name, count),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	on.Store(true)
	fn()
	on.Store(false)
	return int(n.Load())
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestPostRoundTrips pins how many statements a post and a read of a
// thread send, the requests' own rate limiting and authentication
// included: on a busy PostgreSQL a post is bound by its round trips (see
// docs/performance.md), so one more is a regression to see.
// A note into a thread: the token, both rate-limit buckets in one
// statement, the thread's lock with the first log position, the thread,
// the parent with the guard's recent bodies, the message, the thread's
// update.
// On PostgreSQL the token, the rate limits and the earliest pending
// deadline are one statement (admitPG), and a read whose admission saw no
// deadline due sends no due-escalation probe.
func TestPostRoundTrips(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		tok, err := w.forum.CreateToken(w.ctx, services.TokenRequest{Handle: "ada", Rights: []services.Right{services.RightRead, services.RightWrite}})
		if err != nil {
			t.Fatal(err)
		}
		bob := w.agent("bob")
		th := w.must(bob, env{"kind": "ask", "body": "Which option?"}).Thread.ID
		// The first request of a window also clears the token's older
		// windows; count the requests after it, as under load.
		if _, err := w.forum.Admit(w.ctx, tok.Secret, "post"); err != nil {
			t.Fatal(err)
		}
		note := func(ctx context.Context, body string) {
			who, err := w.forum.Admit(ctx, tok.Secret, "post")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.forum.Post(ctx, who, mustJSON(t, env{"kind": "note", "thread": th, "body": body})); err != nil {
				t.Fatal(err)
			}
		}
		// Two first notes prepare the note's statements on the pool's
		// connection (pgx caches them per connection), the admission's two
		// among them: one that claims rate-limit units, one that spends a
		// unit the process leased (services/rate_leases.go); count the next.
		note(w.ctx, "a first remark")
		note(w.ctx, "a second remark")
		var trips atomic.Int64
		post := countStatements(t, w, func() { note(models.CountRoundTrips(w.ctx, &trips), "a remark") })
		read := countStatements(t, w, func() {
			who, err := w.forum.Admit(w.ctx, tok.Secret, "read_thread")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.forum.ReadThread(w.ctx, who, services.ThreadQuery{Thread: th}); err != nil {
				t.Fatal(err)
			}
		})
		// An agent's inbox page: its turns and their messages in one
		// statement, besides admission and the log's horizon (on SQLite,
		// the token and the rate limits apart, and no horizon). On
		// PostgreSQL the horizon and the page go to pgx in one batch
		// (inboxTurns), unseen by GORM: an inbox is two round trips.
		inbox := countStatements(t, w, func() {
			who, err := w.forum.Admit(w.ctx, tok.Secret, "inbox")
			if err != nil {
				t.Fatal(err)
			}
			if in, err := w.forum.Inbox(w.ctx, who, services.InboxQuery{}); err != nil || len(in.Items) == 0 {
				t.Fatal(err, in)
			}
		})
		// SQLite takes no lock (its writer is alone) but counts its log
		// positions in a row of their own.
		wantPost, wantRead, wantInbox := 7, 5, 4
		if models.IsPostgresDB(w.db) {
			// Admission in one statement; the thread's row and its tree go
			// to pgx itself in one batch (threadWithMessagesPgx), unseen by
			// GORM: a read is two round trips.
			wantPost, wantRead, wantInbox = 6, 1, 1
		}
		if post != wantPost || read != wantRead || inbox != wantInbox {
			t.Errorf("a post sent %d statements, a read %d, an inbox %d; want %d, %d and %d", post, read, inbox, wantPost, wantRead, wantInbox)
		}
		// Round trips, as pgx sends them (models.CountRoundTrips: every
		// query, batch, prepare, BEGIN and COMMIT): on PostgreSQL a note
		// is three — admission; BEGIN with the thread's lock and first log
		// position, the thread and the parent with the guard's
		// look-backs, in one batch; the message (its id answered), the
		// thread's update and COMMIT in one batch
		// (services/store_action_pg.go, insertMessageLater).
		// SQLite runs in the process: its seven statements are calls.
		if models.IsPostgresDB(w.db) && trips.Load() != 3 {
			t.Errorf("a post took %d round trips to PostgreSQL, want 3", trips.Load())
		}
		// An answer, which moves the turn to itself and answers the
		// question above its parent, is two besides its admission as well:
		// the chain above the parent is read in the lock's batch
		// (questionChainAhead), the thread's turn names the message through
		// its sequence in the COMMIT's (threadUpdateTurnLater). Counted
		// after a first answer and a clarify that prepare the statements.
		var prior string
		for i, e := range []env{
			{"kind": "answer", "thread": th, "body": "The first option."},
			{"kind": "clarify", "thread": th, "body": "Why the first?", "parent": &prior},
			{"kind": "answer", "thread": th, "body": "It is cheaper.", "parent": &prior},
		} {
			who := bob // the clarify; ada, through her token, answers
			if i != 1 {
				if who, err = w.forum.Admit(w.ctx, tok.Secret, "post"); err != nil {
					t.Fatal(err)
				}
			}
			var trips atomic.Int64
			p, err := w.forum.Post(models.CountRoundTrips(w.ctx, &trips), who, mustJSON(t, e))
			if err != nil {
				t.Fatal(err)
			}
			prior = p.Message.ID
			if i == 2 && models.IsPostgresDB(w.db) && trips.Load() != 2 {
				t.Errorf("an answer took %d round trips to PostgreSQL besides its admission, want 2", trips.Load())
			}
		}
		// An ask that opens a thread is two besides its admission: BEGIN
		// with the party's duplicate probe and the log position; the
		// thread, its root, its first event and the thread's update, each
		// naming the rows before it through their sequences, with COMMIT
		// (post_open_later.go). The answer names the stored rows. (The
		// second ask is counted: the first prepares the statements.)
		for i, body := range []string{"A first new question?", "A second new question?"} {
			who, err := w.forum.Admit(w.ctx, tok.Secret, "post")
			if err != nil {
				t.Fatal(err)
			}
			var opening atomic.Int64
			p, err := w.forum.Post(models.CountRoundTrips(w.ctx, &opening), who, mustJSON(t, env{"kind": "ask", "body": body}))
			if err != nil {
				t.Fatal(err)
			}
			if i == 1 && models.IsPostgresDB(w.db) && opening.Load() != 2 {
				t.Errorf("an ask opening a thread took %d round trips to PostgreSQL besides its admission, want 2", opening.Load())
			}
			id, _ := services.ParseThreadRef(p.Thread.ID)
			var stored models.Thread
			var evs []models.Event
			if err := w.db.First(&stored, id).Error; err != nil {
				t.Fatal(err)
			}
			w.db.Where("thread_id = ?", id).Find(&evs)
			if services.MessageKey(stored.RootMessageID) != p.Message.ID || p.Message.Thread != p.Thread.ID ||
				stored.TurnMessageID != stored.RootMessageID || len(evs) != 1 || evs[0].MessageID == nil ||
				*evs[0].MessageID != stored.RootMessageID || stored.StateEventID != evs[0].ID || stored.RecordEventID != evs[0].ID {
				t.Errorf("the answer names message %s in thread %s; stored: %+v, events %+v", p.Message.ID, p.Thread.ID, stored, evs)
			}
		}
		// A note with an idempotency key is four besides its admission:
		// BEGIN with the key's lock and its row (store_idempotency.go,
		// lockReadKey); the thread's batch; the message, whose id the key's
		// stored answer names; the key, the thread's update and COMMIT.
		// (The second keyed note is counted: the first prepares the key's
		// statements. The admission is left out: now and then it renews
		// the process's lease of rate-limit units, one round trip more.)
		for i, key := range []string{"k-1", "k-2"} {
			who, err := w.forum.Admit(w.ctx, tok.Secret, "post")
			if err != nil {
				t.Fatal(err)
			}
			var keyed atomic.Int64
			raw := mustJSON(t, env{"kind": "note", "thread": th, "body": "a keyed remark " + key, "idempotency_key": key})
			if _, err := w.forum.Post(models.CountRoundTrips(w.ctx, &keyed), who, raw); err != nil {
				t.Fatal(err)
			}
			if i == 1 && models.IsPostgresDB(w.db) && keyed.Load() != 4 {
				t.Errorf("a keyed note took %d round trips to PostgreSQL besides its admission, want 4", keyed.Load())
			}
		}
	})
}
