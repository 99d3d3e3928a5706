package models

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"
	"sync"
	"time"
	"unicode"

	_ "github.com/glebarez/go-sqlite" // registers the "sqlite" driver wrapped here
)

// SQLite lets one writer at a time hold a file: every Parley transaction
// begins IMMEDIATE (it takes the write lock at BEGIN), and a writer that
// finds the lock taken sleeps in SQLite's busy handler, in steps that grow
// to 100 ms, and retries. Sixteen concurrent writers then spend their tail
// asleep: p99 350 ms at 550 posts/s (issue 31, item 6). So within a
// process, writers queue at a gate instead — a channel, handed on in
// order the moment the writer before commits — and only writers of other
// processes on the same file meet the busy handler.
//
// The gate is an optimisation, never what makes writes safe: SQLite's own
// lock still does that. A statement that waits longer than
// sqliteGateWait at the gate goes on without it, to SQLite's busy
// handler, so that a caller holding the gate while it writes on another
// connection fails as it would without the gate rather than hanging.
const sqliteGateWait = 10 * time.Second

// sqliteWriterDriver is the name the gated driver is registered under.
const sqliteWriterDriver = "sqlite-parley"

var (
	registerWriter sync.Once
	sqliteGates    sync.Map // the file's path → chan struct{} of capacity 1
)

// sqliteGatedDriver registers the gated driver once and returns its name.
func sqliteGatedDriver() string {
	registerWriter.Do(func() {
		base, _ := sql.Open("sqlite", "") // no connection: only the driver
		sql.Register(sqliteWriterDriver, gatedDriver{base.Driver()})
		base.Close()
	})
	return sqliteWriterDriver
}

// gateFor is the gate of the file a DSN names: one per file and process.
func gateFor(dsn string) chan struct{} {
	path, _, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?")
	g, _ := sqliteGates.LoadOrStore(path, make(chan struct{}, 1))
	return g.(chan struct{})
}

type gatedDriver struct{ driver.Driver }

func (d gatedDriver) Open(dsn string) (driver.Conn, error) {
	c, err := d.Driver.Open(dsn)
	if err != nil {
		return nil, err
	}
	return &gatedConn{base: c, gate: gateFor(dsn)}, nil
}

// gatedConn passes everything to the driver's connection, taking the gate
// for a transaction (BEGIN to COMMIT or ROLLBACK) and for a write outside
// one.
type gatedConn struct {
	base driver.Conn
	gate chan struct{}
	inTx bool
}

// enter takes the gate, unless ctx ends first (its error) or the wait
// passes sqliteGateWait (false: go on without it).
func (c *gatedConn) enter(ctx context.Context) (bool, error) {
	select {
	case c.gate <- struct{}{}:
		return true, nil
	default:
	}
	t := time.NewTimer(sqliteGateWait)
	defer t.Stop()
	select {
	case c.gate <- struct{}{}:
		return true, nil
	case <-ctx.Done():
		return false, ctx.Err()
	case <-t.C:
		return false, nil
	}
}

func (c *gatedConn) leave(held bool) {
	if held {
		<-c.gate
	}
}

func (c *gatedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	held, err := c.enter(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := c.base.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		c.leave(held)
		return nil, err
	}
	c.inTx = true
	return &gatedTx{Tx: tx, c: c, held: held}, nil
}

func (c *gatedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	exec := c.base.(driver.ExecerContext)
	if c.inTx || !writes(query) {
		return exec.ExecContext(ctx, query, args)
	}
	held, err := c.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer c.leave(held)
	return exec.ExecContext(ctx, query, args)
}

func (c *gatedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q := c.base.(driver.QueryerContext)
	if c.inTx || !writes(query) {
		return q.QueryContext(ctx, query, args)
	}
	held, err := c.enter(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, query, args)
	if err != nil {
		c.leave(held)
		return nil, err
	}
	return &gatedRows{Rows: rows, release: func() { c.leave(held) }}, nil // INSERT … RETURNING
}

func (c *gatedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.base.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

func (c *gatedConn) Ping(ctx context.Context) error { return c.base.(driver.Pinger).Ping(ctx) }

func (c *gatedConn) Prepare(query string) (driver.Stmt, error) { return c.base.Prepare(query) }

func (c *gatedConn) Close() error { return c.base.Close() }

// Begin is never called: database/sql uses BeginTx.
func (c *gatedConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

type gatedTx struct {
	driver.Tx
	c    *gatedConn
	held bool
}

func (t *gatedTx) Commit() error   { defer t.end(); return t.Tx.Commit() }
func (t *gatedTx) Rollback() error { defer t.end(); return t.Tx.Rollback() }

func (t *gatedTx) end() {
	t.c.inTx = false
	t.c.leave(t.held)
}

type gatedRows struct {
	driver.Rows
	once    sync.Once
	release func()
}

func (r *gatedRows) Close() error {
	err := r.Rows.Close()
	r.once.Do(r.release)
	return err
}

// writes tells whether a statement outside a transaction may write, by its
// first word (and, for WITH, by the words of a writing statement after
// it). A write it misses only waits in SQLite's busy handler, as before.
func writes(query string) bool {
	q := strings.TrimLeftFunc(query, unicode.IsSpace)
	word, rest, _ := strings.Cut(q, " ")
	switch strings.ToUpper(word) {
	case "INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER":
		return true
	case "WITH":
		up := strings.ToUpper(rest)
		return strings.Contains(up, "INSERT ") || strings.Contains(up, "UPDATE ") || strings.Contains(up, "DELETE ")
	}
	return false
}
