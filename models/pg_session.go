package models

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// WriteIdleLimit is how long a write transaction may sit idle between two
// of its statements before PostgreSQL ends it (idle_in_transaction_session_timeout,
// set per transaction behind a pooler, for the session on a direct connection). A post's transaction idles for well under 100 ms
// between statements even on a loaded machine (see docs/operations.md);
// a process that stops in the middle of one (SIGSTOP, a debugger, a VM
// paused) holds its transaction id, and with it the log's horizon (see
// services.settle): every other server's waiting reads and streams see
// nothing newer until it ends. This limit is how long that lasts at most.
const WriteIdleLimit = 3 * time.Second

// readIdleLimit is the same limit for a read-only transaction (an export
// streaming to a slow client): it holds no transaction id, so it holds no
// one's horizon back, and may idle longer.
const readIdleLimit = 30 * time.Second

// setting is one session setting Parley relies on, with the value every
// transaction gets unless the URL sets it.
type setting struct {
	name       string
	write      string // in a read-write transaction
	read       string // in a read-only one
	fromURL    bool   // the URL named it: its value for both
	fromOption bool   // the URL's options= sets it for the session: left alone
}

// sessionSettings are the PostgreSQL settings of every transaction: no
// statement runs for more than 5 s nor waits for a lock for more than
// 2 s, and no transaction idles for more than WriteIdleLimit (readIdleLimit
// for a read-only one), so that a stuck query, a forgotten transaction or
// a frozen process cannot pile others up behind it. Migrations and bulk
// steps lift the timeouts in their own transactions (SET LOCAL after these).
func sessionSettings() []setting {
	return []setting{
		{name: "statement_timeout", write: "5s", read: "5s"},
		{name: "lock_timeout", write: "2s", read: "2s"},
		{name: "idle_in_transaction_session_timeout", write: durationSetting(WriteIdleLimit), read: durationSetting(readIdleLimit)},
	}
}

func durationSetting(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }

// Reading: the session settings must hold behind a pooler in transaction
// mode (PgBouncer), where a session's state lasts one transaction and
// startup parameters are refused ("unsupported startup parameter") or, if
// the pooler is told to ignore them, silently dropped. So they are applied
// per transaction: the BEGIN of every transaction carries SET LOCAL of
// each, in the same simple-protocol message, so that they cost no round
// trip more than the BEGIN itself. A statement outside any transaction
// (autocommit: each is its own transaction behind a pooler) is bounded by
// its caller's context deadline, which pgx enforces by a cancel request
// that the pooler forwards; on a direct connection, where session state
// lasts, the settings are also sent as startup parameters and hold for
// those statements too.

// beginSQL is the statement that opens a transaction with opts and the
// session settings.
func beginSQL(opts driver.TxOptions, settings []setting) (string, error) {
	var b strings.Builder
	b.WriteString("BEGIN")
	switch sql.IsolationLevel(opts.Isolation) {
	case sql.LevelDefault:
	case sql.LevelReadUncommitted:
		b.WriteString(" ISOLATION LEVEL READ UNCOMMITTED")
	case sql.LevelReadCommitted:
		b.WriteString(" ISOLATION LEVEL READ COMMITTED")
	case sql.LevelRepeatableRead, sql.LevelSnapshot:
		b.WriteString(" ISOLATION LEVEL REPEATABLE READ")
	case sql.LevelSerializable:
		b.WriteString(" ISOLATION LEVEL SERIALIZABLE")
	default:
		return "", fmt.Errorf("unsupported isolation: %v", opts.Isolation)
	}
	if opts.ReadOnly {
		b.WriteString(" READ ONLY")
	}
	for _, s := range settings {
		if s.fromOption {
			continue
		}
		v := s.write
		if opts.ReadOnly {
			v = s.read
		}
		fmt.Fprintf(&b, "; SET LOCAL %s = %s", s.name, quoteLiteral(v))
	}
	return b.String(), nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// sessionConn is a pgx connection whose transactions begin with the
// session settings. It embeds the stdlib connection, so database/sql finds
// every other method, and Conn() still gives the pgx connection (the
// embedded field is named by the alias, so that it does not hide Conn()).
type sessionConn struct {
	*stdConn
	settings   []setting
	direct     bool     // the session holds a write transaction's settings
	batchBegin []string // BatchBegin's, once made
}

type stdConn = stdlib.Conn

// services reach pgx itself through Conn() (services/store_pgx.go).
var _ interface{ Conn() *pgx.Conn } = (*sessionConn)(nil)

func (c *sessionConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	begin, err := beginSQL(opts, c.settings)
	if err != nil {
		return nil, err
	}
	tx, err := c.Conn().BeginTx(ctx, pgx.TxOptions{BeginQuery: begin})
	if err != nil {
		return nil, err
	}
	return sessionTx{ctx: ctx, tx: tx}, nil
}

type sessionTx struct {
	ctx context.Context
	tx  pgx.Tx
}

func (t sessionTx) Commit() error   { return t.tx.Commit(t.ctx) }
func (t sessionTx) Rollback() error { return t.tx.Rollback(t.ctx) }

type sessionConnector struct {
	inner    driver.Connector
	settings []setting
	direct   bool // startup parameters reach PostgreSQL: the session holds the settings
}

func (c sessionConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(*stdlib.Conn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("postgres: unexpected driver connection %T", conn)
	}
	return &sessionConn{stdConn: sc, settings: c.settings, direct: c.direct}, nil
}

func (c sessionConnector) Driver() driver.Driver { return c.inner.Driver() }

// ExecModes are the pgx query modes --db-exec-mode accepts. Reading of
// each behind a pooler in transaction mode (PgBouncer), where two
// consecutive round trips of one client may run on two server connections:
//
//   - cache_statement: named prepared statements, cached per connection.
//     The fastest; behind PgBouncer older than 1.21 (or with
//     max_prepared_statements = 0) a statement prepared on one server
//     connection is missing on the next ("prepared statement ... does not
//     exist"): it fails, loudly. The default on a direct connection.
//   - cache_describe: statement descriptions cached per connection, each
//     statement sent whole (parse, bind, execute) in one round trip. Safe:
//     what is cached is the statement's parameter and column types, which
//     are the same on every server connection of one database. The default
//     behind a pooler.
//   - exec, simple_protocol: nothing cached, one round trip. Safe.
//   - describe_exec: describes the unnamed statement in one round trip
//     and binds it in the next, which a pooler may send to another
//     client's server connection, whose unnamed statement it then runs
//     with this client's parameters. Refused: it can mix clients'
//     statements, and it costs two round trips everywhere.
var ExecModes = []string{"cache_statement", "cache_describe", "exec", "simple_protocol"}

var execModes = map[string]pgx.QueryExecMode{
	"cache_statement": pgx.QueryExecModeCacheStatement,
	"cache_describe":  pgx.QueryExecModeCacheDescribe,
	"describe_exec":   pgx.QueryExecModeDescribeExec,
	"exec":            pgx.QueryExecModeExec,
	"simple_protocol": pgx.QueryExecModeSimpleProtocol,
}

// ErrUnsafeExecMode refuses a query mode that can mix clients' statements
// behind a pooler.
var ErrUnsafeExecMode = errors.New("describe_exec can run one client's parameters in another client's statement behind a connection pooler (PgBouncer); use cache_describe, exec or simple_protocol (or cache_statement on a direct connection)")

// CheckExecMode refuses a mode Parley does not use ("" means choose).
func CheckExecMode(mode string) error {
	switch {
	case mode == "":
		return nil
	case mode == "describe_exec":
		return ErrUnsafeExecMode
	case execModes[mode] == 0:
		return fmt.Errorf("unknown query mode %q: use one of %s", mode, strings.Join(ExecModes, ", "))
	}
	return nil
}

// PostgresInfo is how a PostgreSQL pool connects: through a pooler that
// keeps no session state (startup parameters refused or dropped), and in
// which pgx query mode.
type PostgresInfo struct {
	Pooled   bool
	ExecMode string
}

var infos sync.Map // *sql.DB → PostgresInfo

// Info says how db connects (zero for SQLite).
func Info(db *sql.DB) PostgresInfo {
	v, _ := infos.Load(db)
	info, _ := v.(PostgresInfo)
	return info
}

// probeParam is a custom setting sent as a startup parameter by the probe:
// PostgreSQL accepts any two-part name; a pooler refuses it or drops it.
const probeParam = "parley.session_probe"

// keepsSessions reports whether a connection's startup parameters reach
// PostgreSQL, which they do on a direct connection (and through a proxy
// that passes the protocol through) and not through a pooler such as
// PgBouncer, which refuses an unknown one or, told to ignore it, drops it.
// Reading: a pooler that drops startup parameters cannot be trusted to
// keep any session state either, so it is treated as transaction pooling.
func keepsSessions(ctx context.Context, config *pgx.ConnConfig) (bool, error) {
	probe := config.Copy()
	probe.RuntimeParams[probeParam] = "on"
	probe.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, probe)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && strings.Contains(pgErr.Message, "unsupported startup parameter") {
			return false, nil
		}
		return false, err
	}
	defer conn.Close(context.Background())
	var got string
	if err := conn.QueryRow(ctx, "SELECT current_setting('"+probeParam+"', true)").Scan(&got); err != nil {
		return false, err
	}
	return got == "on", nil
}

// openPostgres opens a pool of pgx connections to raw whose transactions
// carry the session settings, in the query mode mode (from --db-exec-mode;
// else the URL's default_query_exec_mode; else cache_statement on a direct
// connection, cache_describe behind a pooler).
func openPostgres(raw, mode string) (*sql.DB, PostgresInfo, error) {
	if err := CheckExecMode(mode); err != nil {
		return nil, PostgresInfo{}, fmt.Errorf("--db-exec-mode: %w", err)
	}
	urlMode := ""
	if u, err := url.Parse(raw); err == nil {
		urlMode = u.Query().Get("default_query_exec_mode")
	}
	if err := CheckExecMode(urlMode); err != nil {
		return nil, PostgresInfo{}, fmt.Errorf("the database URL's default_query_exec_mode: %w", err)
	}
	config, err := pgx.ParseConfig(raw)
	if err != nil {
		return nil, PostgresInfo{}, err
	}
	settings := sessionSettings()
	options := config.RuntimeParams["options"]
	for i := range settings {
		s := &settings[i]
		if v, ok := config.RuntimeParams[s.name]; ok {
			s.write, s.read, s.fromURL = v, v, true
			delete(config.RuntimeParams, s.name)
		}
		s.fromOption = strings.Contains(options, s.name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	direct, err := keepsSessions(ctx, config)
	if err != nil {
		return nil, PostgresInfo{}, err
	}
	info := PostgresInfo{Pooled: !direct, ExecMode: mode}
	if info.ExecMode == "" {
		info.ExecMode = urlMode
	}
	if info.ExecMode == "" {
		info.ExecMode = "cache_statement"
		if info.Pooled {
			info.ExecMode = "cache_describe"
		}
	}
	config.DefaultQueryExecMode = execModes[info.ExecMode]
	config.Tracer = roundTrips{}
	if direct {
		// Session state lasts: the settings hold for statements outside
		// transactions too (a transaction's SET LOCAL still wins). They
		// are a write transaction's, so that a batch's BEGIN needs no
		// settings of its own (BatchBegin); every other transaction sets
		// its own in its BEGIN (beginSQL), a read-only one its longer idle
		// limit.
		for _, s := range settings {
			if !s.fromOption {
				config.RuntimeParams[s.name] = s.write
			}
		}
	}
	db := sql.OpenDB(sessionConnector{inner: stdlib.GetConnector(*config), settings: settings, direct: direct})
	infos.Store(db, info)
	return db, info, nil
}
