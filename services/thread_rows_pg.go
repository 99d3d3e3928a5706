package services

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"

	"parley/models"
)

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
		out = make([]models.Message, 0, th.MessageCount)
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

// onPgx runs fn on a connection of db's pool through pgx itself, outside
// any transaction; ok is false when db is not a pool of pgx connections
// (a transaction, another driver): the caller then reads through GORM.
func onPgx(ctx context.Context, db *gorm.DB, fn func(*pgx.Conn) error) (ok bool, err error) {
	pool, isPool := db.Statement.ConnPool.(*sql.DB)
	if !isPool {
		return false, nil
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		return true, err
	}
	defer conn.Close()
	err = conn.Raw(func(driverConn any) error {
		c, native := driverConn.(*stdlib.Conn)
		if !native {
			return nil
		}
		ok = true
		return fn(c.Conn())
	})
	return ok, err
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
	out := make([]models.Message, 0, hint)
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
