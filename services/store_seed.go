package services

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"parley/models"
)

// Seed fills the forum with threads for benchmarks, in bulk SQL rather than
// one Post at a time, yet with what Post would have stored: two agents
// (tokens "<realm>:seed-a" and "-b", made if missing), and per thread a root
// ask by seed-a awaiting anyone, perThread-1 notes under it from both
// agents in turn (a note carries the turn forward), the thread open and
// confirmed as its state of record, its initial event, and one log
// position per thread for its turn and activity. Batches of batchThreads
// threads are one transaction each; progress, if set, is told after each.
func (f *Forum) Seed(ctx context.Context, threads, perThread int, progress func(done int)) error {
	return f.SeedWith(ctx, SeedPlan{Threads: threads, PerThread: perThread, Progress: progress})
}

// SeedPlan is what SeedWith loads: Seed's threads and messages and, when
// OldWord is set, that word at the end of every message of the first
// OldThreads threads it adds, and of none after them: a word found in
// many messages yet in none of the newest, which a search that walks the
// newest messages backwards would read all of (bench search's "vintage").
type SeedPlan struct {
	Threads, PerThread int
	OldWord            string
	OldThreads         int
	Progress           func(done int)
}

// SeedWith loads plan as Seed does.
func (f *Forum) SeedWith(ctx context.Context, plan SeedPlan) error {
	threads, perThread, progress := plan.Threads, plan.PerThread, plan.Progress
	if threads < 1 || perThread < 1 {
		return fmt.Errorf("seed: %d threads of %d messages: both must be at least 1", threads, perThread)
	}
	a, b := f.realm+":seed-a", f.realm+":seed-b"
	for _, h := range []string{"seed-a", "seed-b"} {
		ok, err := identityExists(f.db.WithContext(ctx), f.realm+":"+h)
		if err != nil {
			return err
		}
		if !ok {
			if _, err := f.CreateToken(ctx, TokenRequest{Handle: h, Rights: []Right{RightRead, RightWrite}}); err != nil {
				return err
			}
		}
	}
	const batchThreads = 10000
	old := 0 // the threads of this batch that carry plan.OldWord
	for done := 0; done < threads; done += batchThreads {
		n := min(batchThreads, threads-done)
		if plan.OldWord != "" {
			old = min(n, max(0, plan.OldThreads-done))
		}
		err := f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return f.seedBatch(tx, n, perThread, a, b, old, plan.OldWord) })
		if err != nil {
			return fmt.Errorf("seed: %w", err)
		}
		if progress != nil {
			progress(done + n)
		}
	}
	// A forum that grew to this size has been analyzed by autovacuum on the
	// way; a bulk load has not, and the planner would read the new rows
	// through statistics of an empty table.
	if err := f.db.WithContext(ctx).Exec("ANALYZE").Error; err != nil {
		return fmt.Errorf("seed: analyze: %w", err)
	}
	return nil
}

// seedBatch adds n threads of per messages; those of the first old threads
// end with " "+word.
func (f *Forum) seedBatch(tx *gorm.DB, n, per int, a, b string, old int, word string) error {
	if err := bulkSession(tx); err != nil {
		return err
	}
	var tb, mb int64
	if err := tx.Raw("SELECT COALESCE(MAX(id), 0) + 1 FROM threads").Scan(&tb).Error; err != nil {
		return err
	}
	if err := tx.Raw("SELECT COALESCE(MAX(id), 0) + 1 FROM messages").Scan(&mb).Error; err != nil {
		return err
	}
	pos, err := reservePositions(tx, n)
	if err != nil {
		return err
	}
	now := f.timestamp()
	// The question mark is a value: GORM would read one written in the SQL,
	// even inside quotes, as a placeholder on PostgreSQL.
	const question = ": which option?"
	// i is a BIGINT, so that PostgreSQL reads "? + i" as one and a log
	// position (far above 2^31) fits.
	series := func(count int) string {
		return fmt.Sprintf("WITH RECURSIVE s(i) AS (SELECT CAST(0 AS BIGINT) UNION ALL SELECT i + 1 FROM s WHERE i < %d) ", count-1)
	}
	steps := []struct {
		name string
		sql  string
		args []any
	}{
		{"threads", series(n) + `INSERT INTO threads (id, title, root_message_id, state, state_origin, state_confirmed_at, state_label, state_event_id,
				record_state, record_origin, record_label, record_confirmed_at, record_confirmed_by, record_event_id,
				awaiting_identity, awaiting_extension, turn_message_id, turn_seq, activity_seq,
				created_by_identity, created_by_extension, message_count, created_at, updated_at)
			SELECT ? + i, 'Seeded topic ' || (? + i) || ?, ? + i * ?, 'open', 'llm', ?, ?, 0,
				'open', 'llm', ?, ?, ?, 0, '*', '', ? + i * ?, ? + i, ? + i, ?, '', ?, ?, ? FROM s`,
			[]any{tb, tb, question, mb, per, now, a, a, now, a, mb, per, pos, pos, a, per, now, now}},
		{"messages", series(n*per) + `INSERT INTO messages (id, thread_id, parent_id, depth, kind, author_identity, author_kind, body,
				awaiting_identity, created_at)
			SELECT ? + i, ? + i / ?, CASE WHEN i % ? = 0 THEN NULL ELSE ? + (i / ?) * ? END,
				CASE WHEN i % ? = 0 THEN 1 ELSE 2 END, CASE WHEN i % ? = 0 THEN 'ask' ELSE 'note' END,
				CASE WHEN i % ? % 2 = 0 THEN ? ELSE ? END, 'llm',
				CASE WHEN i % ? = 0 THEN 'Seeded topic ' || (? + i / ?) || ? ELSE 'Seeded remark ' || (i % ?) || ' on topic ' || (? + i / ?) END
				|| CASE WHEN i / ? < ? THEN ? ELSE '' END,
				'*', ? FROM s`,
			[]any{mb, tb, per, per, mb, per, per, per, per, per, a, b, per, tb, per, question, per, tb, per, per, old, " " + word, now}},
		{"events", series(n) + `INSERT INTO events (seq, thread_id, type, from_state, to_state, origin, label, actor_identity, message_id, at, confirmed_at)
			SELECT ? + i, ? + i, 'state', '', 'open', 'llm', ?, ?, ? + i * ?, ?, ? FROM s`,
			[]any{pos, tb, a, a, mb, per, now, now}},
		{"state events", `UPDATE threads SET state_event_id = (SELECT e.id FROM events e WHERE e.seq = threads.turn_seq),
				record_event_id = (SELECT e.id FROM events e WHERE e.seq = threads.turn_seq) WHERE id >= ?`, []any{tb}},
	}
	for _, st := range steps {
		if err := tx.Exec(st.sql, st.args...).Error; err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
	}
	if models.IsPostgresDB(tx) {
		for _, t := range []string{"threads", "messages"} {
			if err := tx.Exec("SELECT setval(pg_get_serial_sequence(?, 'id'), (SELECT MAX(id) FROM "+t+"))", t).Error; err != nil {
				return fmt.Errorf("%s sequence: %w", t, err)
			}
		}
	}
	return nil
}

// reservePositions takes n consecutive log positions for the current
// transaction and returns the first.
func reservePositions(tx *gorm.DB, n int) (int64, error) {
	if n >= positionsPerTx {
		return 0, fmt.Errorf("reserve %d log positions: at most %d per transaction", n, positionsPerTx-1)
	}
	first, err := nextSeq(tx)
	if err != nil || n == 1 {
		return first, err
	}
	if models.IsPostgresDB(tx) {
		err = tx.Exec("SELECT set_config('parley.pos', ?, true)", fmt.Sprint(first%positionsPerTx+int64(n)-1)).Error
	} else {
		err = tx.Exec("UPDATE log_sequence SET value = value + ? WHERE id = 1", n-1).Error
	}
	if err != nil {
		return 0, fmt.Errorf("reserve log positions: %w", err)
	}
	return first, nil
}

// bulkSession frees a bulk transaction (Seed, Import, Export) from the
// session timeouts of ordinary requests on PostgreSQL (see
// models.sessionDefaults): loading a batch of 100,000 messages, with their
// search index, takes longer than any request may.
func bulkSession(tx *gorm.DB) error {
	if !models.IsPostgresDB(tx) {
		return nil
	}
	return tx.Exec("SET LOCAL statement_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0").Error
}
