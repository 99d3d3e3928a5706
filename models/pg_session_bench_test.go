package models_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"parley/migrations/dbtest"
)

// BenchmarkBegin measures what the session settings cost a transaction:
// a BEGIN alone against the BEGIN with the three SET LOCAL in the same
// message, and (for scale) the SET LOCAL in a round trip of their own, each followed by one statement and COMMIT, as a post's
// transaction begins (go test -bench Begin ./models).
func BenchmarkBegin(b *testing.B) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbtest.PostgresURL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	const sets = "SET LOCAL statement_timeout = '5s'; SET LOCAL lock_timeout = '2s'; SET LOCAL idle_in_transaction_session_timeout = '3000ms'"
	for _, c := range []struct{ name, begin, after string }{
		{"plain", "BEGIN", ""},
		{"set-local", "BEGIN; " + sets, ""},
		{"set-local-apart", "BEGIN", sets}, // what a separate round trip would cost
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				tx, err := conn.BeginTx(ctx, pgx.TxOptions{BeginQuery: c.begin})
				if err != nil {
					b.Fatal(err)
				}
				if c.after != "" {
					if _, err := tx.Exec(ctx, c.after); err != nil {
						b.Fatal(err)
					}
				}
				var one int
				if err := tx.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
