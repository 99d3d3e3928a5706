package services

import (
	"context"
	"database/sql"
	"strings"

	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"

	"parley/models"
)

// threadMessagesPgx is threadMessages on PostgreSQL outside a transaction:
// the same query, scanned through pgx itself rather than database/sql. The
// thread tree is the largest answer Parley gives; under load, database/sql's
// per-column conversions were a fifth of a read's CPU in --pprof (read of
// 500 messages), and pgx decodes into the same fields directly. It
// reports false when it cannot reach pgx (a transaction, another driver):
// the caller then scans as before.
func threadMessagesPgx(ctx context.Context, db *gorm.DB, thread int64, hint int) ([]models.Message, bool, error) {
	pool, ok := db.Statement.ConnPool.(*sql.DB)
	if !ok {
		return nil, false, nil
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		return nil, true, err
	}
	defer conn.Close()
	// Rows are scanned in place, into a slice sized from the thread's
	// message count: a Message is large, and growing the slice and copying
	// each row into it cost as much as decoding the rows.
	out := make([]models.Message, 0, hint)
	native := false
	err = conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return nil
		}
		native = true
		rows, err := c.Conn().Query(ctx, "SELECT "+strings.Join(treeColumns, ", ")+" FROM messages WHERE thread_id = $1 ORDER BY id", thread)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			out = append(out, models.Message{})
			m := &out[len(out)-1]
			if err := rows.Scan(&m.ID, &m.ThreadID, &m.ParentID, &m.Depth, &m.Kind, &m.AuthorIdentity, &m.AuthorExtension,
				&m.AuthorKind, &m.AuthorBadge, &m.Body, &m.ProvenanceModel, &m.ProvenanceClient, &m.ToIdentity, &m.ToExtension,
				&m.State, &m.ClaimID, &m.AwaitingIdentity, &m.AwaitingExtension, &m.CreatedAt, &m.ReplyBy); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	return out, native, err
}
