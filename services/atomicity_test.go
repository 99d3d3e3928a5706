package services_test

import (
	"errors"
	"strings"
	"testing"

	"gorm.io/gorm"

	"parley/models"
	"parley/services"
)

// failOn makes every write to a table fail, as a full disk or a dropped
// connection would, halfway through an action: through GORM's create or
// update, or as the fixed statement a post writes its rows with
// (services/store_rows.go), the ones a post on PostgreSQL queues for its
// COMMIT's batch included (services/store_action_pg.go: they pass the
// callbacks as they are queued).
func failOn(t *testing.T, db *gorm.DB, op, table string) {
	t.Helper()
	fixed := map[string]string{"create": "INSERT INTO " + table + " ", "update": "UPDATE " + table + " "}[op]
	fail := func(tx *gorm.DB) {
		sql := tx.Statement.SQL.String()
		if tx.Statement.Table == table || table == "log position" && strings.Contains(sql, "parley.pos") ||
			fixed != "" && strings.HasPrefix(sql, fixed) {
			tx.AddError(errors.New("injected fault"))
		}
	}
	var err error
	switch op {
	case "create":
		err = db.Callback().Create().Before("gorm:create").Register("test:fail", fail)
		if err == nil {
			err = db.Callback().Row().Before("gorm:row").Register("test:fail", fail)
		}
		if err == nil {
			err = db.Callback().Raw().Before("gorm:raw").Register("test:fail", fail)
		}
	case "update":
		err = db.Callback().Update().Before("gorm:update").Register("test:fail", fail)
		if err == nil {
			err = db.Callback().Raw().Before("gorm:raw").Register("test:fail", fail)
		}
	case "take":
		// The next log position: the counter row on SQLite, a query of
		// the transaction's id on PostgreSQL.
		table = "log_sequence"
		if models.IsPostgresDB(db) {
			table = "log position"
		}
		err = db.Callback().Update().Before("gorm:update").Register("test:fail", fail)
		if err == nil {
			err = db.Callback().Row().After("gorm:row").Register("test:fail", fail)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Callback().Create().Remove("test:fail")
		db.Callback().Update().Remove("test:fail")
		db.Callback().Row().Remove("test:fail")
		db.Callback().Raw().Remove("test:fail")
	})
}

// TestFailedActionLeavesNothingBehind injects a fault at each step of a post
// and checks that nothing of it was stored.
func TestFailedActionLeavesNothingBehind(t *testing.T) {
	steps := []struct{ op, table string }{{"create", "messages"}, {"create", "events"}, {"update", "threads"}, {"take", "log position"}}
	for _, step := range steps {
		t.Run(step.op+" "+step.table, func(t *testing.T) {
			eachWorld(t, func(t *testing.T, w *world) {
				alice, bob := w.agent("alice"), w.agent("bob")
				th := w.must(alice, env{"kind": "ask", "body": "q"}).Thread.ID
				before := w.thread(th).Thread
				msgs, evs := w.counts()
				var threads int64
				w.db.Model(&models.Thread{}).Count(&threads)

				failOn(t, w.db, step.op, step.table)
				_, errAnswer := w.post(bob, env{"kind": "answer", "thread": th, "body": "a"})
				_, errAsk := w.post(bob, env{"kind": "ask", "body": "new thread"})
				for _, err := range []error{errAnswer, errAsk} {
					if r, unexpected := services.AsRefusal(err); err == nil || !unexpected || r.Reason != services.Internal {
						t.Fatalf("want an internal fault, got %v", err)
					}
				}
				w.db.Callback().Create().Remove("test:fail")
				w.db.Callback().Update().Remove("test:fail")
				w.db.Callback().Row().Remove("test:fail")
				w.db.Callback().Raw().Remove("test:fail")

				m2, e2 := w.counts()
				var t2 int64
				w.db.Model(&models.Thread{}).Count(&t2)
				after := w.thread(th).Thread
				if m2 != msgs || e2 != evs || t2 != threads || after.State != before.State || after.MessageCount != before.MessageCount {
					t.Fatalf("a failed post left traces: messages %d→%d events %d→%d threads %d→%d state %s→%s",
						msgs, m2, evs, e2, threads, t2, before.State, after.State)
				}
				w.must(bob, env{"kind": "answer", "thread": th, "body": "works again"})
			})
		})
	}
}

// TestFaultInsideTheCommitBatch makes the database itself refuse the
// thread's update, which a post on PostgreSQL sends in one batch after its
// message's insert (and an opening ask's thread and event) and before
// COMMIT: the inserts ran, and must not survive. SQLite runs the same post statement by statement.
func TestFaultInsideTheCommitBatch(t *testing.T) {
	// Two ways the thread's update, sent with COMMIT, can fail: the
	// database refuses it, or it writes no row (a trigger skips it) — the
	// row count is then checked inside the batch, before COMMIT runs.
	for _, fault := range []struct{ name, sqlite, pg string }{
		{"refused", "SELECT RAISE(ABORT, 'injected fault')", "RAISE EXCEPTION 'injected fault';"},
		{"no row written", "SELECT RAISE(IGNORE)", "RETURN NULL;"},
	} {
		t.Run(fault.name, func(t *testing.T) {
			eachWorld(t, func(t *testing.T, w *world) {
				alice, bob := w.agent("alice"), w.agent("bob")
				th := w.must(alice, env{"kind": "ask", "body": "q"}).Thread.ID
				before := w.thread(th).Thread
				msgs, evs := w.counts()
				trigger := []string{`CREATE TRIGGER test_fault BEFORE UPDATE ON threads
					WHEN (NEW.message_count > OLD.message_count OR NEW.root_message_id <> OLD.root_message_id) AND EXISTS (SELECT 1 FROM messages WHERE thread_id = NEW.id AND body = 'fault in the batch')
					BEGIN ` + fault.sqlite + `; END`}
				drop := "DROP TRIGGER test_fault"
				if models.IsPostgresDB(w.db) {
					trigger = []string{`CREATE FUNCTION test_fault() RETURNS trigger LANGUAGE plpgsql AS $$
						BEGIN
							IF (NEW.message_count > OLD.message_count OR NEW.root_message_id <> OLD.root_message_id) AND EXISTS (SELECT 1 FROM messages WHERE thread_id = NEW.id AND body = 'fault in the batch') THEN
								` + fault.pg + `
							END IF;
							RETURN NEW;
						END $$`,
						`CREATE TRIGGER test_fault BEFORE UPDATE ON threads FOR EACH ROW EXECUTE FUNCTION test_fault()`}
					drop = "DROP TRIGGER test_fault ON threads"
				}
				for _, q := range trigger {
					if err := w.db.Exec(q).Error; err != nil {
						t.Fatal(err)
					}
				}
				var threads int64
				w.db.Model(&models.Thread{}).Count(&threads)
				// A note, and an ask opening a thread, whose four writes
				// all go out with COMMIT (post_open_later.go).
				for _, e := range []env{{"kind": "note", "thread": th, "body": "fault in the batch"}, {"kind": "ask", "body": "fault in the batch"}} {
					_, err := w.post(bob, e)
					if r, unexpected := services.AsRefusal(err); err == nil || !unexpected || r.Reason != services.Internal {
						t.Fatalf("%s: want an internal fault, got %v", e["kind"], err)
					}
				}
				if err := w.db.Exec(drop).Error; err != nil {
					t.Fatal(err)
				}
				m2, e2 := w.counts()
				var t2 int64
				w.db.Model(&models.Thread{}).Count(&t2)
				after := w.thread(th).Thread
				if m2 != msgs || e2 != evs || t2 != threads || after.MessageCount != before.MessageCount {
					t.Fatalf("a post refused by the database left traces: messages %d→%d events %d→%d threads %d→%d count %d→%d",
						msgs, m2, evs, e2, threads, t2, before.MessageCount, after.MessageCount)
				}
				w.must(bob, env{"kind": "note", "thread": th, "body": "works again"})
			})
		})
	}
}
