package services_test

import (
	"testing"
	"time"

	"parley/models"
	"parley/services"
)

// TestKeyTakenInTheCommitBatchReplays: on PostgreSQL a keyed post's key
// goes out with its COMMIT (saveKey, execLaterOr). When another writer
// took the key without its lock, the primary key turns the insert away
// inside that batch: the post must roll back whole and be answered as the
// replay of the other writer's row (errKeyTaken, then Post's second try).
func TestKeyTakenInTheCommitBatchReplays(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		if !models.IsPostgresDB(w.db) {
			t.Skip("on SQLite every write transaction holds the database: no other writer can take the key meanwhile")
		}
		alice, bob, carol := w.agent("alice"), w.agent("bob"), w.agent("carol")
		q := w.must(alice, env{"kind": "ask", "body": "Which port?"})
		e := env{"kind": "answer", "thread": q.Thread.ID, "body": "8443, said once.", "idempotency_key": "carol-1"}
		// carol's row holds the envelope's digest (the key is not in it)
		// and her answer: the row the other writer stores under bob's key.
		theirs := w.must(carol, e)

		sqlDB, err := w.db.DB()
		if err != nil {
			t.Fatal(err)
		}
		conn, err := sqlDB.Conn(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		beginHeld(t, w.ctx, conn)
		if _, err := conn.ExecContext(w.ctx, `INSERT INTO idempotency_keys
			(token_id, identity, idempotency_key, envelope_hash, message_id, result, created_at)
			SELECT $1, identity, 'bob-1', envelope_hash, message_id, result, created_at FROM idempotency_keys
			WHERE idempotency_key = 'carol-1'`, bob.TokenID); err != nil {
			t.Fatal(err)
		}
		before, _ := w.counts()

		type answer struct {
			p   services.Posted
			err error
		}
		done := make(chan answer, 1)
		mine := env{"kind": "answer", "thread": q.Thread.ID, "body": "8443, said once.", "idempotency_key": "bob-1"}
		go func() {
			p, err := w.post(bob, mine)
			done <- answer{p, err}
		}()
		// Wait until bob's COMMIT batch waits on the key's row.
		for deadline := time.Now().Add(time.Minute); ; {
			var waiting int
			if err := w.db.Raw(`SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'
				AND query LIKE '%idempotency_keys%'`).Scan(&waiting).Error; err != nil {
				t.Fatal(err)
			}
			if waiting > 0 {
				break
			}
			select {
			case a := <-done:
				t.Fatalf("bob's post ended before it met the other writer's key: %+v", a)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatal("bob's post never waited on the key's row")
			}
			time.Sleep(10 * time.Millisecond)
		}
		if _, err := conn.ExecContext(w.ctx, "COMMIT"); err != nil {
			t.Fatal(err)
		}
		a := <-done
		if a.err != nil {
			t.Fatalf("bob's post: %v", a.err)
		}
		if !a.p.Replayed || a.p.Message.ID != theirs.Message.ID {
			t.Errorf("bob's post answered %s (replayed %v), want the replay of %s", a.p.Message.ID, a.p.Replayed, theirs.Message.ID)
		}
		if after, _ := w.counts(); after != before {
			t.Errorf("bob's turned-away post left %d messages behind", after-before)
		}
	})
}
