package services

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"parley/models"
)

// ExplainInbox shows how the database reads the first page of an inbox
// (of who, from no extension): PostgreSQL's EXPLAIN (with ANALYZE and
// BUFFERS when analyze is set), SQLite's query plan. For operators,
// benchmarks and the test that keeps the plan index-ordered. On
// PostgreSQL it is the generic plan of the prepared statement, the one
// the inbox runs (see genericPlanPG).
func (f *Forum) ExplainInbox(ctx context.Context, who Caller, analyze bool) (string, error) {
	return f.explainInbox(ctx, who, analyze, false)
}

// ExplainAddressedInbox is ExplainInbox for the addressed view (inbox with
// addressed=true): its page of the turns awaiting who's identity.
func (f *Forum) ExplainAddressedInbox(ctx context.Context, who Caller, analyze bool) (string, error) {
	return f.explainInbox(ctx, who, analyze, true)
}

func (f *Forum) explainInbox(ctx context.Context, who Caller, analyze, addressed bool) (string, error) {
	sql, args := inboxTurnsSQL(who, "", 0, f.limits.PageDefault, addressed)
	plan, err := f.explainGeneric(ctx, sql, args, analyze)
	if err != nil {
		return "", fmt.Errorf("explain inbox: %w", err)
	}
	return plan, nil
}

// ExplainPartyProbe shows how the database reads the party's recent
// bodies for the rule across threads (partyRecent), for who's party: on
// PostgreSQL the generic plan the post runs it under (genericPlan), else
// SQLite's query plan. For operators and the test that keeps it on the
// party's index.
func (f *Forum) ExplainPartyProbe(ctx context.Context, who Caller, analyze bool) (string, error) {
	p := f.partyProbe(who, "", f.timestamp())
	p.n = max(p.n, 1)
	plan, err := f.explainGeneric(ctx, partyRecentRow.sqlite, p.args(), analyze)
	if err != nil {
		return "", fmt.Errorf("explain party probe: %w", err)
	}
	return plan, nil
}

// explainGeneric explains sql (with ? placeholders) run with args: on
// PostgreSQL the generic plan of its prepared statement
// (explainGenericPgx), or EXPLAIN when pgx is out of reach; SQLite's query
// plan.
func (f *Forum) explainGeneric(ctx context.Context, sql string, args []any, analyze bool) (string, error) {
	db := f.db.WithContext(ctx)
	explain, col := "EXPLAIN QUERY PLAN ", 3
	if models.IsPostgresDB(db) {
		plan, ok, err := explainGenericPgx(ctx, db, numbered(sql), args, analyze)
		if ok || err != nil {
			return plan, err
		}
		explain, col = "EXPLAIN ", 0
		if analyze {
			explain = "EXPLAIN (ANALYZE, BUFFERS) "
		}
	}
	lines, err := explainLines(db, explain+sql, args, col)
	return strings.Join(lines, "\n"), err
}

// ExplainSearch shows how the database carries out a search: PostgreSQL's
// EXPLAIN (with ANALYZE and BUFFERS when analyze is set) of the search
// statement, SQLite's query plan of its candidate query. For operators and
// benchmarks; it checks no right.
func (f *Forum) ExplainSearch(ctx context.Context, q SearchQuery, analyze bool) (string, error) {
	req, err := f.searchRequest(ctx, q)
	if err != nil {
		return "", err
	}
	var lines []string
	scan := func(tx *gorm.DB, sql string, args []any, col int) (err error) {
		lines, err = explainLines(tx, sql, args, col)
		return err
	}
	err = f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if !models.IsPostgresDB(tx) {
			sql, args := sqliteSearchSQL(req, f.limits.SearchCandidates)
			return scan(tx, "EXPLAIN QUERY PLAN "+sql, args, 3)
		}
		sql, args, err := planSearch(tx, req, f.limits.SearchCandidates)
		if err != nil {
			return err
		}
		explain := "EXPLAIN "
		if analyze {
			explain = "EXPLAIN (ANALYZE, BUFFERS) "
		}
		return scan(tx, explain+sql, args, 0)
	})
	if err != nil {
		return "", fmt.Errorf("explain search: %w", err)
	}
	return strings.Join(lines, "\n"), nil
}

// explainLines runs an EXPLAIN statement and answers column col of each
// row it answers: PostgreSQL's plan is its first, SQLite's query plan its
// fourth.
func explainLines(tx *gorm.DB, sql string, args []any, col int) ([]string, error) {
	rows, err := tx.Raw(sql, args...).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var lines []string
	for rows.Next() {
		vals := make([]any, len(cols))
		for i := range vals {
			vals[i] = new(any)
		}
		if err := rows.Scan(vals...); err != nil {
			return nil, err
		}
		lines = append(lines, fmt.Sprint(*vals[col].(*any)))
	}
	return lines, rows.Err()
}

// explainGenericPgx prepares sql (in pgx's $n form) and explains its
// generic plan executed with args, in one transaction of simple-protocol
// statements (the PREPARE's own $n must reach PostgreSQL as written): the
// plan a cached prepared statement runs under genericPlanPG. ok is false
// when pgx is out of reach (see onPgx).
func explainGenericPgx(ctx context.Context, db *gorm.DB, sql string, args []any, analyze bool) (plan string, ok bool, err error) {
	values := make([]string, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			values[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		case int64:
			values[i] = strconv.FormatInt(v, 10)
		case int:
			values[i] = strconv.Itoa(v)
		case time.Time:
			values[i] = "'" + v.UTC().Format(time.RFC3339Nano) + "'"
		default:
			return "", true, fmt.Errorf("explain: argument %d is a %T", i+1, a)
		}
	}
	explain := "EXPLAIN "
	if analyze {
		explain = "EXPLAIN (ANALYZE, BUFFERS) "
	}
	ok, err = onPgx(ctx, db, func(c *pgx.Conn) error {
		tx, err := c.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		for _, st := range []string{"SET LOCAL plan_cache_mode = force_generic_plan", "PREPARE parley_explain AS " + sql} {
			if _, err := tx.Exec(ctx, st, pgx.QueryExecModeSimpleProtocol); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, explain+"EXECUTE parley_explain("+strings.Join(values, ", ")+")", pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			return err
		}
		var lines []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return err
			}
			lines = append(lines, line)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		plan = strings.Join(lines, "\n")
		_, err = tx.Exec(ctx, "DEALLOCATE parley_explain", pgx.QueryExecModeSimpleProtocol)
		return err
	})
	return plan, ok, err
}
