package services

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"parley/models"
)

// A post on PostgreSQL runs its transaction by hand on one connection, so
// that it can send its statements in pgx batches: BEGIN goes out with the
// first statements of the action (the thread's lock, the thread and the
// parent: lockThreadBatched), and the writes whose answers nothing needs
// before COMMIT (the thread's update; the message of a reply that marks
// nothing, whose id its answer and the thread's turn name only then:
// insertMessageLater) wait and go out with COMMIT. A note is then three round trips, its admission included, where
// a transaction opened by database/sql and statement by statement took
// eight; pprof showed two thirds of a post's server CPU in its round
// trips.
//
// The action's *gorm.DB has the pgAction as its connection pool, so every
// statement of the services runs in the action's transaction. The batched
// ones pass GORM's callbacks whenever anything besides GORM's own is
// registered there (passRow, execLater, unobserved): the tests' fault
// injection and statement counts see each one. A statement
// that is not batched first sends whatever waits (BEGIN, queued writes)
// in one batch, then itself: the order of the statements is the order
// the services issued them in, and a read sees the action's writes.
//
// One transaction per action holds as before: COMMIT goes out only after
// every rule passed and every write was queued; a statement that fails in
// a batch aborts the transaction (PostgreSQL skips the rest of the batch,
// COMMIT included, up to its end), which is then rolled back.

// pgAction is one action's transaction on its own connection.
type pgAction struct {
	conn    *sql.Conn // held from the first statement to the end
	pg      *pgx.Conn // the same connection, reached through pgx
	opening []string  // BEGIN and the session settings, until sent
	opened  bool      // BEGIN was sent
	queue   []queuedWrite
	failed  error // the first statement that failed in a batch
}

// queuedWrite is a write waiting for the next round trip; rows is the
// number of rows it must affect, -1 for any. A write that answers a row
// (INSERT … RETURNING) has answer, which reads it once it is sent
// (insertMessageLater).
type queuedWrite struct {
	sql    string
	args   []any
	rows   int64
	answer func(pgx.Row) error
	short  error // the error when it writes other than rows rows; nil: one that says so
}

// checked is w's statement, made to fail inside the database when it
// does not write its rows: the batch that sends it may carry COMMIT, which
// PostgreSQL runs before the client could look at a row count, and which
// it skips once a statement of the batch has failed. The texts are kept
// (checkedTexts): a post's thread update was built anew on every post.
func (w queuedWrite) checked() string {
	if w.rows < 0 {
		return w.sql
	}
	k := checkedKey{w.sql, w.rows}
	if s, ok := checkedTexts.Load(k); ok {
		return s.(string)
	}
	s := "WITH w AS (" + w.sql + " RETURNING 1) SELECT 1 / ((SELECT count(*) FROM w) = " +
		strconv.FormatInt(w.rows, 10) + ")::int"
	checkedTexts.Store(k, s)
	return s
}

// checkedTexts are the checked writes' texts by statement and rows, a
// bounded set: the writes that count their rows are fixed statements
// (saveThread's).
var checkedTexts sync.Map // checkedKey → string

type checkedKey struct {
	sql  string
	rows int64
}

// divisionByZero is the SQLSTATE a checked write fails with.
const divisionByZero = "22012"

// batchConn is a pgx connection that can open a write transaction inside
// a batch (models.sessionConn).
type batchConn interface {
	Conn() *pgx.Conn
	BatchBegin() []string
}

// transact runs fn as one transaction: through a pgAction on PostgreSQL,
// else (SQLite, or a pool whose connections are not models') GORM's.
func (f *Forum) transact(ctx context.Context, fn func(tx *gorm.DB) error) error {
	pool, ok := f.db.Statement.ConnPool.(*sql.DB)
	if !ok || !models.IsPostgresDB(f.db) {
		return f.db.WithContext(ctx).Transaction(fn)
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	a := &pgAction{conn: conn}
	// The driver connection is kept beyond Raw: the *sql.Conn stays held
	// until the action ends, and the action alone uses it, one statement
	// at a time, through pgx or through database/sql, never both at once.
	_ = conn.Raw(func(dc any) error {
		if c, native := dc.(batchConn); native {
			a.pg, a.opening = c.Conn(), c.BatchBegin()
		}
		return nil
	})
	if a.pg == nil {
		conn.Close()
		return f.db.WithContext(ctx).Transaction(fn)
	}
	defer conn.Close()
	done := false
	defer func() {
		if !done { // a panic: nothing of the action may stay
			a.rollback()
		}
	}()
	tx := f.db.Session(&gorm.Session{Context: ctx, NewDB: true})
	tx.Statement.ConnPool = a
	err = fn(tx)
	if err == nil {
		err = a.commit(ctx)
	}
	if err != nil {
		a.rollback()
		if a.failed != nil && !errors.Is(err, a.failed) {
			err = fmt.Errorf("%w (after %v)", a.failed, err)
		}
	}
	done = true
	return err
}

// actionOf is tx's pgAction, nil when tx is not one.
func actionOf(tx *gorm.DB) *pgAction {
	a, _ := tx.Statement.ConnPool.(*pgAction)
	return a
}

// batchRead is a statement of a batch that answers a row, scanned by scan
// (given pgx.ErrNoRows when there is none).
type batchRead struct {
	sql   string
	args  []any
	scan  func(pgx.Row) error
	plans *planSlot // the statement's kept scan plans (scanKept), if any
}

// genericPlan brackets reads so that PostgreSQL runs them under a generic
// plan, then puts the session's own plan_cache_mode back (kept meanwhile
// in parley.plan_cache_mode, transaction-local as both settings are).
// It is for a statement whose parameters make every custom plan look
// cheaper than the generic one, so that PostgreSQL's plan cache plans it
// anew on each call, when the generic plan is as good: a reply's parent
// with the guard's look-backs planned in 0.5 ms to run in 0.2. (The
// inbox's batch is a transaction of its own and ends with it, so it sets
// the mode once: genericPlanPG.)
func genericPlan(reads ...batchRead) []batchRead {
	on := batchRead{sql: `SELECT ` + genericOnSQL, scan: func(r pgx.Row) error { return r.Scan(nil, nil) }}
	off := batchRead{sql: `SELECT ` + genericOffSQL, scan: func(r pgx.Row) error { return r.Scan(nil) }}
	return append(append([]batchRead{on}, reads...), off)
}

// genericOnSQL and genericOffSQL are genericPlan's brackets as columns,
// two and one: a statement that sets or ends the generic plan as it runs,
// for the statements planned after it.
const (
	genericOnSQL = `set_config('parley.plan_cache_mode', current_setting('plan_cache_mode'), true),
		set_config('plan_cache_mode', 'force_generic_plan', true)`
	genericOffSQL = `set_config('plan_cache_mode', current_setting('parley.plan_cache_mode'), true)`
)

// scanGeneric is scanFixed under a generic plan (genericPlan) on a
// pgAction; elsewhere each statement is planned by itself.
func scanGeneric(tx *gorm.DB, s fixedSQL, args []any, dest ...any) error {
	return scanFixedPlan(tx, s, args, true, dest...)
}

// scanBatched runs q, readied on a's transaction, through GORM's row
// callbacks (passQuery) and then as a.scan does.
func scanBatched(q *gorm.DB, a *pgAction, generic bool, dest ...any) error {
	r, err := passQuery(q)
	if err != nil {
		return err
	}
	return a.scan(q.Statement.Context, r, generic, dest...)
}

// scan sends r to pgx in one round trip with what waits, under a generic
// plan when generic is set, and scans its row into dest; sql.ErrNoRows
// when it answers no row, as database/sql's Row does.
func (a *pgAction) scan(ctx context.Context, r batchRead, generic bool, dest ...any) error {
	found := false
	r.scan = func(row pgx.Row) error {
		err := scanKept(row, r.plans, dest...)
		found = err == nil
		return err
	}
	reads := []batchRead{r}
	if generic {
		reads = genericPlan(r)
	}
	if err := a.send(ctx, reads, false); err != nil {
		return err
	}
	if !found {
		return sql.ErrNoRows
	}
	return nil
}

// send sends, in one round trip, BEGIN when not sent yet, the queued
// writes, reads, and COMMIT when commit is set.
func (a *pgAction) send(ctx context.Context, reads []batchRead, commit bool) error {
	if a.failed != nil {
		return a.failed
	}
	var b pgx.Batch
	opening := a.opening
	if a.opened {
		opening = nil
	}
	for _, s := range opening {
		b.Queue(s)
	}
	for _, w := range a.queue {
		b.Queue(w.checked(), w.args...)
	}
	for _, r := range reads {
		b.Queue(r.sql, r.args...)
	}
	if commit {
		b.Queue("COMMIT")
	}
	if b.Len() == 0 {
		return nil
	}
	a.opened = true
	queue := a.queue
	a.queue = nil
	br := a.pg.SendBatch(ctx, &b)
	err := func() error {
		for range opening {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("begin: %w", err)
			}
		}
		for _, w := range queue {
			if w.answer != nil {
				if err := w.answer(br.QueryRow()); err != nil {
					return err
				}
				continue
			}
			if _, err := br.Exec(); err != nil {
				if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == divisionByZero && w.rows >= 0 {
					if w.short != nil {
						return w.short
					}
					return fmt.Errorf("rows written other than %d: %.40s", w.rows, w.sql)
				}
				return err
			}
		}
		for _, r := range reads {
			if err := r.scan(br.QueryRow()); err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
		}
		if commit {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("commit: %w", err)
			}
		}
		return nil
	}()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		a.failed = err
	}
	return err
}

// flush sends what waits, before a statement that is not batched.
func (a *pgAction) flush(ctx context.Context) error {
	if a.opened && len(a.queue) == 0 {
		return a.failed
	}
	return a.send(ctx, nil, false)
}

func (a *pgAction) commit(ctx context.Context) error {
	if !a.opened && len(a.queue) == 0 {
		return nil // the action sent nothing: nothing to commit
	}
	return a.send(ctx, nil, true)
}

// rollback ends a transaction that did not commit. A connection it cannot
// bring back to idle is closed, so that the pool never reuses it.
func (a *pgAction) rollback() {
	if !a.opened || a.pg.IsClosed() || a.pg.PgConn().TxStatus() == 'I' {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := a.pg.Exec(ctx, "ROLLBACK"); err != nil || a.pg.PgConn().TxStatus() != 'I' {
		_ = a.pg.Close(ctx)
	}
}

// The gorm.ConnPool of the action's statements that are not batched.

func (a *pgAction) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	if err := a.flush(ctx); err != nil {
		return nil, err
	}
	return a.conn.PrepareContext(ctx, query)
}

func (a *pgAction) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if d, later := ctx.Value(deferredKey{}).(deferred); later {
		a.queue = append(a.queue, queuedWrite{sql: query, args: args, rows: d.rows, short: d.short})
		return deferredResult(d.rows), nil
	}
	if err := a.flush(ctx); err != nil {
		return nil, err
	}
	return a.conn.ExecContext(ctx, query, args...)
}

func (a *pgAction) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := a.flush(ctx); err != nil {
		return nil, err
	}
	return a.conn.QueryContext(ctx, query, args...)
}

// QueryRowContext cannot answer an error of its own: after a failed batch
// the statement still goes out, and PostgreSQL refuses it (the transaction
// is aborted); transact reports the batch's error first.
func (a *pgAction) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	_ = a.flush(ctx)
	return a.conn.QueryRowContext(ctx, query, args...)
}

// deferredKey marks, in a statement's context, a write to queue until the
// action's next round trip; its value, a deferred, says the rows it must
// affect, checked when it is sent.
type deferredKey struct{}

// deferred is a queued write's rows (-1 for any) and the error it ends
// the action with when it writes other than those (nil: one that says
// so).
type deferred struct {
	rows  int64
	short error
}

// deferredResult answers a queued write as if it had run.
type deferredResult int64

func (r deferredResult) LastInsertId() (int64, error) {
	return 0, errors.New("a queued write has no insert id")
}
func (r deferredResult) RowsAffected() (int64, error) { return int64(r), nil }

// execLater runs s through GORM's callbacks on tx and, on a pgAction,
// queues it for the action's next round trip (it must then affect rows
// rows, -1 for any; the rows answered are those); elsewhere it runs at
// once, as exec does. With nothing to see it pass the callbacks
// (unobserved), it is queued without them.
func (s fixedSQL) execLater(tx *gorm.DB, rows int64, args ...any) (int64, error) {
	return s.execLaterOr(tx, deferred{rows: rows}, args...)
}

// execLaterOr is execLater, the queued write ending the action with
// d.short when it writes other than d.rows rows.
func (s fixedSQL) execLaterOr(tx *gorm.DB, d deferred, args ...any) (int64, error) {
	a := actionOf(tx)
	switch {
	case a == nil:
		res := s.exec(tx, args...)
		return res.RowsAffected, res.Error
	case unobserved(tx):
		a.queue = append(a.queue, queuedWrite{sql: s.postgres, args: args, rows: d.rows, short: d.short})
		return d.rows, nil
	}
	q := s.on(tx, args...)
	q.Statement.Context = context.WithValue(q.Statement.Context, deferredKey{}, d)
	res := q.Callback().Raw().Execute(q)
	return res.RowsAffected, res.Error
}

// passRow runs a statement of a pgAction that answers a row through GORM's
// row callbacks without sending it, and answers its text and arguments as
// the callbacks left them, or the error one of them added (an injected
// fault): the statements of a batch are seen by the callbacks as every
// other. With nothing to see them (unobserved), s and args are answered
// as they are.
func passRow(tx *gorm.DB, s fixedSQL, args ...any) (batchRead, error) {
	if unobserved(tx) {
		return batchRead{sql: s.postgres, args: args, plans: s.plans}, nil
	}
	r, err := passQuery(s.on(tx, args...))
	r.plans = s.plans
	return r, err
}

// passQuery is passRow for a statement readied on its own *gorm.DB.
func passQuery(q *gorm.DB) (batchRead, error) {
	rec := &recorder{}
	q.Statement.ConnPool = rec
	q = q.Callback().Row().Execute(q)
	if q.Error != nil {
		return batchRead{}, q.Error
	}
	return batchRead{sql: rec.sql, args: rec.args}, nil
}

// recorder is a gorm.ConnPool that sends nothing: it keeps the statement
// it was given (passRow).
type recorder struct {
	sql  string
	args []any
}

func (r *recorder) PrepareContext(context.Context, string) (*sql.Stmt, error) {
	return nil, errors.New("recorder: prepare")
}
func (r *recorder) ExecContext(context.Context, string, ...any) (sql.Result, error) {
	return nil, errors.New("recorder: exec")
}
func (r *recorder) QueryContext(context.Context, string, ...any) (*sql.Rows, error) {
	return nil, errors.New("recorder: query")
}
func (r *recorder) QueryRowContext(_ context.Context, query string, args ...any) *sql.Row {
	r.sql, r.args = query, args
	return nil
}
