package services_test

import (
	"strconv"
	"strings"
	"testing"

	"parley/models"
	"parley/services"
)

// A reply that changes no state goes out with its COMMIT on PostgreSQL,
// its id answered there (insertMessageLater): the answer must still name
// the stored message, a turn it opens must be that message, refused notes
// must leave no gap in the ids, and a note whose insert fails in the
// COMMIT's batch must leave nothing behind.
func TestReplyIDComesWithCommit(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		bob, ada := w.agent("bob"), w.agent("ada")
		th := w.must(bob, env{"kind": "ask", "body": "Which option?"}).Thread.ID
		first := w.must(ada, env{"kind": "note", "thread": th, "body": "A first remark."})
		w.refused(ada, env{"kind": "note", "thread": th, "parent": "msg_999999", "body": "Astray."}, services.MessageNotFound)
		w.refused(ada, env{"kind": "note", "thread": th, "body": "A first remark."}, services.DuplicateBody)
		second := w.must(ada, env{"kind": "note", "thread": th, "body": "A second remark."})

		stored := map[string]string{}
		var rows []models.Message
		if err := w.db.Where("thread_id IN (SELECT thread_id FROM messages WHERE kind = 'ask')").Find(&rows).Error; err != nil {
			t.Fatal(err)
		}
		for _, m := range rows {
			stored[m.Body] = services.MessageKey(m.ID)
		}
		for _, p := range []services.Posted{first, second} {
			if got := stored[p.Message.Body]; p.Message.ID != got {
				t.Errorf("the note %q was answered as %s, stored as %s", p.Message.Body, p.Message.ID, got)
			}
		}
		a, _ := strconv.ParseInt(strings.TrimPrefix(first.Message.ID, "msg_"), 10, 64)
		b, _ := strconv.ParseInt(strings.TrimPrefix(second.Message.ID, "msg_"), 10, 64)
		if a == 0 || b != a+1 {
			t.Errorf("two refused notes between %s and %s left a gap in the ids", first.Message.ID, second.Message.ID)
		}

		// Acts that move the turn to themselves: the thread's turn is the
		// message each was answered as (threadUpdateTurnLater).
		turnIs := func(p services.Posted) {
			t.Helper()
			var turn int64
			if err := w.db.Raw("SELECT turn_message_id FROM threads WHERE id = ?", strings.TrimPrefix(th, "th_")).Scan(&turn).Error; err != nil {
				t.Fatal(err)
			}
			if services.MessageKey(turn) != p.Message.ID {
				t.Errorf("after the %s answered as %s, the thread's turn is msg_%d", p.Message.Kind, p.Message.ID, turn)
			}
			var body string
			if err := w.db.Raw("SELECT body FROM messages WHERE id = ?", turn).Scan(&body).Error; err != nil || body != p.Message.Body {
				t.Errorf("the %s answered as %s: msg_%d holds %q (%v)", p.Message.Kind, p.Message.ID, turn, body, err)
			}
		}
		ans := w.must(ada, env{"kind": "answer", "thread": th, "body": "The second option."})
		turnIs(ans)
		turnIs(w.must(bob, env{"kind": "clarify", "thread": th, "parent": ans.Message.ID, "body": "Why the second?"}))

		if !models.IsPostgresDB(w.db) {
			return
		}
		// The database itself refuses the insert, inside the batch that
		// carries the thread's update and COMMIT.
		if err := w.db.Exec(`ALTER TABLE messages ADD CONSTRAINT test_no_boom CHECK (body <> 'Boom.')`).Error; err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.db.Exec(`ALTER TABLE messages DROP CONSTRAINT test_no_boom`) })
		before := w.thread(th)
		msgs, events := w.counts()
		if _, err := w.post(ada, env{"kind": "note", "thread": th, "body": "Boom."}); err == nil || !strings.Contains(err.Error(), "test_no_boom") {
			t.Fatalf("a note the database refused was answered %v", err)
		}
		after := w.thread(th)
		msgs2, events2 := w.counts()
		if msgs2 != msgs || events2 != events || after.Thread.MessageCount != before.Thread.MessageCount ||
			after.Thread.UpdatedAt != before.Thread.UpdatedAt {
			t.Errorf("a failed note left writes behind: messages %d→%d, events %d→%d, thread count %d→%d",
				msgs, msgs2, events, events2, before.Thread.MessageCount, after.Thread.MessageCount)
		}
		// The connection went back to the pool clean: the next note lands.
		w.must(ada, env{"kind": "note", "thread": th, "body": "A third remark."})
	})
}
