package services

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"parley/models"
)

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
		c, native := driverConn.(interface{ Conn() *pgx.Conn })
		if !native {
			return nil
		}
		ok = true
		return fn(c.Conn())
	})
	return ok, err
}

// scanPgx is scanRow outside a transaction on PostgreSQL: s with args on
// a connection of db's pool, through pgx itself without database/sql's
// rows in between (a fifth of a request's admission). It passes GORM's
// row callbacks first (passQuery: the tests' statement counts and
// injected faults see it) when anything but GORM's own is registered
// there (unobserved); it goes through GORM when pgx is out of reach.
// sql.ErrNoRows when it answers no row.
func scanPgx(ctx context.Context, db *gorm.DB, s fixedSQL, args []any, dest ...any) error {
	ok, err := onPgx(ctx, db, func(c *pgx.Conn) error {
		r := batchRead{sql: s.postgres, args: args}
		if !unobserved(db) {
			var err error
			if r, err = passQuery(s.on(db.WithContext(ctx), args...)); err != nil {
				return err
			}
		}
		err := scanKept(c.QueryRow(ctx, r.sql, r.args...), s.plans, dest...)
		if errors.Is(err, pgx.ErrNoRows) {
			return sql.ErrNoRows
		}
		return err
	})
	if !ok && err == nil { // fn never ran: the callbacks have not seen the statement
		return scanOne(s.on(db.WithContext(ctx), args...), dest...)
	}
	return err
}

// Connection says how the forum's pool reaches PostgreSQL: through a
// pooler or not, and in which pgx query mode (zero on SQLite), for the
// server's log.
func (f *Forum) Connection() models.PostgresInfo {
	sqlDB, err := f.db.DB()
	if err != nil {
		return models.PostgresInfo{}
	}
	return models.Info(sqlDB)
}
