package services

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"parley/migrations/dbtest"
)

// keptRow is a statement whose columns cover the types the hot statements
// scan (bigint, text, timestamptz, bytea, NULLs), and destinations of
// each kind: a value, a pointer that NULL leaves nil, a sql.Null*, none.
const keptRow = `SELECT $1::bigint, $2::text, NULL::text, $3::timestamptz, NULL::timestamptz,
	'\x0102'::bytea, NULL::bigint, 7::int, 'skipped'::text`

type keptDest struct {
	id      int64
	text    string
	null    sql.NullString
	at      time.Time
	never   *time.Time
	raw     []byte
	count   sql.NullInt64
	small   int
	skipped any
}

func (d *keptDest) fields() []any {
	return []any{&d.id, &d.text, &d.null, &d.at, &d.never, &d.raw, &d.count, &d.small, nil}
}

// TestScanKeptAgreesWithPgx: a row scanned through kept plans (scanKept)
// reads what pgx's own Scan reads, in the binary format of a cached
// statement and in the text format of the simple protocol (the same text,
// so the kept plans are planned anew), and again when they are reused;
// a destination of another type is planned anew too, and a row with more
// columns than destinations is refused.
func TestScanKeptAgreesWithPgx(t *testing.T) {
	db := dbtest.Fresh(t, "postgres")
	ctx := context.Background()
	at := time.Date(2026, 12, 7, 6, 30, 0, 123000, time.UTC)
	modes := []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement}
	slot := new(planSlot)
	ok, err := onPgx(ctx, db, func(c *pgx.Conn) error {
		for i, mode := range modes {
			var want, got keptDest
			if err := c.QueryRow(ctx, keptRow, mode, int64(1)<<40, "née", at).Scan(want.fields()...); err != nil {
				return err
			}
			if err := scanKept(c.QueryRow(ctx, keptRow, mode, int64(1)<<40, "née", at), slot, got.fields()...); err != nil {
				return fmt.Errorf("round %d (%v): %w", i, mode, err)
			}
			if !reflect.DeepEqual(want, got) || got.id != 1<<40 || got.text != "née" || !got.at.Equal(at) || got.never != nil || got.small != 7 {
				t.Errorf("round %d (%v): kept plans read %+v, pgx %+v", i, mode, got, want)
			}
		}
		var n sql.NullInt64 // the first column into another type
		var d keptDest
		dest := append([]any{&n}, d.fields()[1:]...)
		if err := scanKept(c.QueryRow(ctx, keptRow, int64(5), "x", at), slot, dest...); err != nil || n.Int64 != 5 || !n.Valid {
			t.Errorf("another destination type: %v, read %+v", err, n)
		}
		if err := scanKept(c.QueryRow(ctx, keptRow, int64(5), "x", at), slot, dest[:8]...); err == nil {
			t.Error("nine columns scanned into eight destinations")
		}
		return nil
	})
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
}

// TestScanKeptConcurrently: connections share a statement's kept plans;
// run it with -race.
func TestScanKeptConcurrently(t *testing.T) {
	db := dbtest.Fresh(t, "postgres")
	ctx := context.Background()
	at := time.Date(2026, 12, 7, 6, 30, 0, 0, time.UTC)
	slot := new(planSlot)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			_, err := onPgx(ctx, db, func(c *pgx.Conn) error {
				for i := range 50 {
					var d keptDest
					if err := scanKept(c.QueryRow(ctx, keptRow, int64(g*1000+i), "t", at), slot, d.fields()...); err != nil {
						return err
					}
					if d.id != int64(g*1000+i) || d.text != "t" || !d.at.Equal(at) {
						return fmt.Errorf("read %+v for %d", d, g*1000+i)
					}
				}
				return nil
			})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
