package services

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"parley/models"
)

// threadWithMessages reads a thread and its messages in creation order:
// on PostgreSQL in one round trip (threadWithMessagesPgx).
func threadWithMessages(db *gorm.DB, id int64) (models.Thread, []models.Message, error) {
	if models.IsPostgresDB(db) {
		th, rows, found, ok, err := threadWithMessagesPgx(db.Statement.Context, db, id)
		switch {
		case ok && err != nil:
			return th, nil, fmt.Errorf("read thread: %w", err)
		case ok && !found:
			return th, nil, threadNotFound(id)
		case ok:
			return th, rows, nil
		}
	}
	th, err := readThreadRow(db, id)
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return th, nil, threadNotFound(id)
	}
	if err != nil {
		return th, nil, fmt.Errorf("read thread: %w", err)
	}
	rows, err := threadMessages(db, id, th.MessageCount)
	if err != nil {
		return th, nil, fmt.Errorf("read thread: %w", err)
	}
	return th, rows, nil
}

// hintMax is the most rows a slice is made for ahead of reading them.
const hintMax = 1024

// capHint makes a stored count safe to allocate by: a count is a number in
// a row, and a row can be wrong (a bug, an edited bundle: a message_count
// of 10^9 made the first read of its thread allocate 10^9 messages and
// kill the process, -5 panicked in makeslice). The slice grows by append
// past the hint when there are more rows, so the hint only saves copies.
func capHint(n int) int { return min(max(n, 0), hintMax) }

// treeColumns are the columns of messages a thread tree shows, in the
// order threadMessages scans them; treeColumnsLeftOut are the others
// (the guard's bookkeeping). A test checks that together they are every
// column of the table, so a new column cannot be forgotten here.
var (
	treeColumns = []string{"id", "thread_id", "parent_id", "depth", "kind", "author_identity", "author_extension", "author_kind",
		"author_badge", "body", "provenance_model", "provenance_client", "to_identity", "to_extension", "state", "claim_id",
		"awaiting_identity", "awaiting_extension", "created_at", "reply_by", "author_owner"}
	treeColumnsLeftOut = []string{"body_hash", "chain_len", "search"} // search: PostgreSQL's tsvector
	// messageColumns are the columns of models.Message: every column but
	// PostgreSQL's search vector, which "SELECT *" would send and decode
	// for nothing (a post reads its parent with them).
	messageColumns = append(append([]string{}, treeColumns...), "body_hash", "chain_len")
)

// threadMessages reads a thread's messages in creation order, in one query
// scanned by hand: the thread tree is the largest answer Parley gives, and
// the generic struct scan cost a third of its time.
//
// hint is how many messages to expect (the thread's message count), never
// trusted as a size: see capHint.
func threadMessages(db *gorm.DB, thread int64, hint int) ([]models.Message, error) {
	if models.IsPostgresDB(db) {
		if out, ok, err := threadMessagesPgx(db.Statement.Context, db, thread, hint); ok {
			return out, err
		}
	}
	rows, err := db.Raw("SELECT "+strings.Join(treeColumns, ", ")+" FROM messages WHERE thread_id = ? ORDER BY id", thread).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]models.Message, 0, capHint(hint))
	for rows.Next() {
		var m models.Message
		if err := rows.Scan(treeFields(&m)...); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// threadWithMessagesPgx reads a thread's row and its messages on
// PostgreSQL outside a transaction, as readThreadRow and threadMessagesPgx
// do, but in one round trip: both queries go in one pgx batch. A read of a
// thread waited on each in turn. found is false when no thread has the id;
// ok false when pgx is out of reach (the caller reads as before).
func threadWithMessagesPgx(ctx context.Context, db *gorm.DB, thread int64) (th models.Thread, out []models.Message, found, ok bool, err error) {
	ok, err = onPgx(ctx, db, func(c *pgx.Conn) error {
		var b pgx.Batch
		b.Queue(threadSelect+" WHERE id = $1", thread)
		b.Queue("SELECT "+strings.Join(treeColumns, ", ")+" FROM messages WHERE thread_id = $1 ORDER BY id", thread)
		br := c.SendBatch(ctx, &b)
		defer br.Close()
		if err := br.QueryRow().Scan(threadFields(&th)...); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			return err
		}
		found = true
		rows, err := br.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		out = make([]models.Message, 0, capHint(th.MessageCount))
		for rows.Next() {
			out = append(out, models.Message{})
			if err := rows.Scan(treeFields(&out[len(out)-1])...); err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return br.Close()
	})
	return th, out, found, ok, err
}

// treeFields are m's fields in treeColumns' order.
func treeFields(m *models.Message) []any { return messageFields(m)[:len(treeColumns)] }

// threadMessagesPgx is threadMessages on PostgreSQL outside a transaction:
// the same query, scanned through pgx itself rather than database/sql. The
// thread tree is the largest answer Parley gives; under load, database/sql's
// per-column conversions were a fifth of a read's CPU in --pprof (read of
// 500 messages), and pgx decodes into the same fields directly. It
// reports false when it cannot reach pgx (a transaction, another driver):
// the caller then scans as before.
func threadMessagesPgx(ctx context.Context, db *gorm.DB, thread int64, hint int) ([]models.Message, bool, error) {
	// Rows are scanned in place, into a slice sized from the thread's
	// message count: a Message is large, and growing the slice and copying
	// each row into it cost as much as decoding the rows.
	out := make([]models.Message, 0, capHint(hint))
	native, err := onPgx(ctx, db, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, "SELECT "+strings.Join(treeColumns, ", ")+" FROM messages WHERE thread_id = $1 ORDER BY id", thread)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			out = append(out, models.Message{})
			if err := rows.Scan(treeFields(&out[len(out)-1])...); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	return out, native, err
}
