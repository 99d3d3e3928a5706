package models_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/models"
)

// show reads settings inside a transaction of opts.
func show(t *testing.T, db *gorm.DB, opts *sql.TxOptions, names ...string) []string {
	t.Helper()
	var out []string
	err := db.Transaction(func(tx *gorm.DB) error {
		for _, n := range names {
			var v string
			if err := tx.Raw("SHOW " + n).Scan(&v).Error; err != nil {
				return err
			}
			out = append(out, v)
		}
		return nil
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// showBatched reads settings inside a write transaction opened as a post's
// is, in a pgx batch that begins with the connection's BatchBegin.
func showBatched(t *testing.T, db *gorm.DB, names ...string) (out []string, begin []string) {
	t.Helper()
	sqlDB, _ := db.DB()
	conn, err := sqlDB.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		c := dc.(interface {
			Conn() *pgx.Conn
			BatchBegin() []string
		})
		begin = c.BatchBegin()
		var b pgx.Batch
		for _, s := range begin {
			b.Queue(s)
		}
		for _, n := range names {
			b.Queue("SHOW " + n)
		}
		b.Queue("COMMIT")
		br := c.Conn().SendBatch(context.Background(), &b)
		defer br.Close()
		for range begin {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		for range names {
			var v string
			if err := br.QueryRow().Scan(&v); err != nil {
				return err
			}
			out = append(out, v)
		}
		_, err := br.Exec()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, begin
}

// TestTransactionsCarryTheSessionSettings: every transaction begins with
// SET LOCAL of the session settings, so that they hold behind a pooler in
// transaction mode, where a session's startup parameters do not (issue
// 24): a write transaction may idle for models.WriteIdleLimit (3 s; a
// frozen process holds others' feeds back no longer, issue 23 item 5), a
// read-only one 30 s; a value in the URL wins; the query mode is the
// URL's, and describe_exec, unsafe behind a pooler, is refused.
func TestTransactionsCarryTheSessionSettings(t *testing.T) {
	base := dbtest.PostgresURL(t)
	names := []string{"statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout"}
	for _, c := range []struct {
		name, query, mode string
		readOnly          bool
		want              string
		wantMode          string
	}{
		{"write", "", "", false, "5s 2s 3s", "cache_statement"},
		{"read only", "", "", true, "5s 2s 30s", "cache_statement"},
		{"the URL's values", "&lock_timeout=7s&idle_in_transaction_session_timeout=1min", "", false, "5s 7s 1min", "cache_statement"},
		{"the URL's mode", "&default_query_exec_mode=exec", "", false, "5s 2s 3s", "exec"},
		{"the flag's mode over the URL's", "&default_query_exec_mode=exec", "simple_protocol", false, "5s 2s 3s", "simple_protocol"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, err := models.OpenWith(base+c.query, models.Options{ExecMode: c.mode})
			if err != nil {
				t.Fatal(err)
			}
			sqlDB, _ := db.DB()
			defer sqlDB.Close()
			if got := strings.Join(show(t, db, &sql.TxOptions{ReadOnly: c.readOnly}, names...), " "); got != c.want {
				t.Fatalf("in a transaction: %s, want %s", got, c.want)
			}
			if !c.readOnly {
				// A post's batch: on a direct connection BEGIN alone, the
				// session holding a write transaction's settings.
				got, begin := showBatched(t, db, names...)
				if strings.Join(got, " ") != c.want || len(begin) != 1 {
					t.Fatalf("in a batch opened by %q: %s, want %s after BEGIN alone", begin, got, c.want)
				}
			}
			if info := models.Info(sqlDB); info.ExecMode != c.wantMode || info.Pooled {
				t.Fatalf("connection %+v, want mode %s, direct", info, c.wantMode)
			}
			var one int
			if err := db.WithContext(context.Background()).Raw("SELECT ?::int", 1).Scan(&one).Error; err != nil || one != 1 {
				t.Fatalf("a query in mode %s: %d, %v", c.wantMode, one, err)
			}
		})
	}
	for _, c := range []struct{ query, mode string }{
		{"&default_query_exec_mode=describe_exec", ""},
		{"", "describe_exec"},
		{"", "prepared"},
	} {
		_, err := models.OpenWith(base+c.query, models.Options{ExecMode: c.mode})
		if err == nil || !strings.Contains(err.Error(), "describe_exec") && !strings.Contains(err.Error(), "unknown query mode") {
			t.Fatalf("URL %q, mode %q: %v; want a refusal", c.query, c.mode, err)
		}
	}
}
