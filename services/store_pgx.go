package services

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"
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
		c, native := driverConn.(*stdlib.Conn)
		if !native {
			return nil
		}
		ok = true
		return fn(c.Conn())
	})
	return ok, err
}
