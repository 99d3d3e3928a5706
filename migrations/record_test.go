package migrations_test

import (
	"context"
	"testing"

	"parley/migrations"
	"parley/migrations/dbtest"
)

// TestStateOfRecordIsFilledFromTheLog builds threads as the first release
// stored them (schema 2, before errata 1), migrates, and checks that each
// thread's state of record is the last confirmed state of its event log.
func TestStateOfRecordIsFilledFromTheLog(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			db := dbtest.Empty(t, dialect)
			ctx := context.Background()
			if _, err := migrations.UpTo(ctx, db, 2); err != nil {
				t.Fatal(err)
			}
			const at = "2026-01-01T00:00:00Z"
			thread := func(id int, state string, confirmed bool, label string) {
				conf := "NULL"
				if confirmed {
					conf = "'" + at + "'"
				}
				exec(t, db.Exec(`INSERT INTO threads (id, title, state, state_origin, state_confirmed_at, state_label, created_by_identity, created_at, updated_at)
					VALUES (?, 't', ?, 'llm', `+conf+`, ?, 'ainotes:alice', ?, ?)`, id, state, label, at, at).Error)
			}
			seq := 0
			event := func(th int, typ, from, to, origin, label string, confirmed bool) {
				seq++
				conf := "NULL"
				if confirmed {
					conf = "'" + at + "'"
				}
				exec(t, db.Exec(`INSERT INTO events (seq, thread_id, type, from_state, to_state, origin, label, actor_identity, at, confirmed_at)
					VALUES (?, ?, ?, ?, ?, ?, ?, 'x', ?, `+conf+`)`, seq, th, typ, from, to, origin, label, at).Error)
			}
			// 1: a proposal confirmed by a lock holder, then a new proposal.
			thread(1, "decided", false, "ainotes:alice")
			event(1, "state", "", "open", "llm", "ainotes:alice", true)
			event(1, "state", "open", "answered", "llm", "ainotes:bob", true)
			event(1, "confirm", "answered", "answered", "llm", "KI · mod", true)
			event(1, "state", "answered", "decided", "llm", "ainotes:alice", false)
			// 2: a human's decision, then proposals that undid it under the
			// old rules.
			thread(2, "open", false, "ainotes:alice")
			event(2, "state", "", "open", "llm", "ainotes:alice", true)
			event(2, "state", "open", "decided", "user", "human:ada", true)
			event(2, "state", "decided", "rejected", "llm", "ainotes:alice", false)
			event(2, "state", "rejected", "open", "llm", "ainotes:alice", false)
			// 3: proposals that led back to the confirmed state.
			thread(3, "answered", false, "ainotes:bob")
			event(3, "state", "", "open", "llm", "ainotes:alice", true)
			event(3, "state", "open", "answered", "user", "human:ada", true)
			event(3, "state", "answered", "closed", "llm", "ainotes:alice", false)
			event(3, "state", "closed", "open", "llm", "ainotes:alice", false)
			event(3, "state", "open", "answered", "llm", "ainotes:bob", false)

			if _, err := migrations.Up(ctx, db); err != nil {
				t.Fatal(err)
			}
			type row struct {
				ID                                                        int
				State, RecordState, RecordLabel, RecordConfirmedBy, Label string
				Confirmed, RecordConfirmed                                bool
			}
			var rows []row
			exec(t, db.Raw(`SELECT id, state, record_state, record_label, record_confirmed_by, state_label AS label,
				state_confirmed_at IS NOT NULL AS confirmed, record_confirmed_at IS NOT NULL AS record_confirmed
				FROM threads ORDER BY id`).Scan(&rows).Error)
			want := []row{
				{1, "decided", "answered", "ainotes:bob", "KI · mod", "ainotes:alice", false, true},
				{2, "open", "decided", "human:ada", "human:ada", "ainotes:alice", false, true},
				{3, "answered", "answered", "human:ada", "human:ada", "human:ada", true, true},
			}
			if len(rows) != len(want) {
				t.Fatalf("%d threads", len(rows))
			}
			for i := range want {
				if rows[i] != want[i] {
					t.Errorf("thread %d: %+v, want %+v", want[i].ID, rows[i], want[i])
				}
			}
		})
	}
}

func exec(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
