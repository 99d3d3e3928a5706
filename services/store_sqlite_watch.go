package services

import (
	"context"
	"database/sql"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"parley/models"
)

// sqliteWatchEvery is how often the SQLite watcher looks for commits of
// other processes. A commit is noticed at most this much later (plus one
// query), well inside errata 2's 100 ms (docs/protocol.md §13); an idle look costs
// one PRAGMA on a connection of its own, some microseconds.
const sqliteWatchEvery = 25 * time.Millisecond

// sqliteWatchBusy is the watcher connection's busy_timeout: a look that
// finds the database locked (a checkpoint, a recovery) gives up quickly and
// is made again at the next tick, instead of waiting the pool's 10 s.
const sqliteWatchBusy = 20 * time.Millisecond

// watchSQLite is StartFeed on SQLite: several processes on one file (a
// desktop client's stdio `parley mcp` beside `parley serve`) wake each
// other's waiters, as LISTEN/NOTIFY does on PostgreSQL (docs/protocol.md §13,
// errata 2). SQLite has no notifications, so one goroutine per process
// polls, on a connection of its own outside the pool: PRAGMA data_version,
// which changes when another connection of the file commits, and then the
// log's counter. When the counter rose by positions this process did not
// announce itself, it wakes every waiter of the hub — it cannot tell whose
// turns a foreign write opened — to read again from its cursor, so nothing
// is skipped or repeated. This process's own writes, which change
// data_version too, woke their audience already (published) and are not
// announced twice.
//
// The watcher only reads, in autocommit statements: it holds no lock
// between ticks and never the write lock. An error (SQLITE_BUSY, a lost
// connection) is retried at the next tick and logged once, not per tick.
// It stops with ctx. An in-memory database, which no other process can
// open, is not watched.
func (f *Forum) watchSQLite(ctx context.Context, url string, log *slog.Logger) {
	if url == ":memory:" || strings.HasPrefix(url, "file::memory:") || strings.Contains(url, "mode=memory") {
		return
	}
	db, err := models.Open(url)
	if err != nil {
		log.Warn("feed: no watcher; waiting reads wake only on this process's writes", "err", err)
		return
	}
	sqlDB, err := db.DB()
	if err != nil {
		log.Warn("feed: no watcher; waiting reads wake only on this process's writes", "err", err)
		return
	}
	sqlDB.SetMaxOpenConns(1)
	f.hub.own.start()
	go func() {
		defer sqlDB.Close()
		w := sqliteWatcher{forum: f, db: sqlDB, log: log, last: -1}
		t := time.NewTicker(sqliteWatchEvery)
		defer t.Stop()
		for {
			w.look(ctx)
			select {
			case <-ctx.Done():
				w.close()
				return
			case <-t.C:
			}
		}
	}()
}

// sqliteWatcher is the state of watchSQLite's goroutine.
type sqliteWatcher struct {
	forum       *Forum
	db          *sql.DB
	log         *slog.Logger
	conn        *sql.Conn
	versionStmt *sql.Stmt // PRAGMA data_version, prepared on conn
	counterStmt *sql.Stmt // the log's counter, prepared on conn
	version     int64     // data_version at the last look; -1 to read the counter anyway
	last        int64     // the log counter at the last look; -1 before the first
	failing     bool      // the last look failed (logged once)
}

func (w *sqliteWatcher) look(ctx context.Context) {
	if err := w.lookOnce(ctx); err != nil {
		if ctx.Err() != nil {
			return
		}
		if !w.failing {
			w.log.Warn("feed: watcher cannot read the database; retrying", "err", err)
			w.failing = true
		}
		w.version = -1
		return
	}
	if w.failing {
		w.log.Info("feed: watcher reads the database again")
		w.failing = false
	}
}

func (w *sqliteWatcher) lookOnce(ctx context.Context) error {
	if w.conn == nil {
		conn, err := w.db.Conn(ctx)
		if err != nil {
			return err
		}
		if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.FormatInt(sqliteWatchBusy.Milliseconds(), 10)); err != nil {
			conn.Close()
			return err
		}
		version, err := conn.PrepareContext(ctx, "PRAGMA data_version")
		if err != nil {
			conn.Close()
			return err
		}
		counter, err := conn.PrepareContext(ctx, "SELECT value FROM log_sequence WHERE id = 1")
		if err != nil {
			version.Close()
			conn.Close()
			return err
		}
		w.conn, w.versionStmt, w.counterStmt, w.version = conn, version, counter, -1
	}
	var version int64
	if err := w.versionStmt.QueryRowContext(ctx).Scan(&version); err != nil {
		w.close() // a fresh connection next time, should this one be broken
		return err
	}
	if version == w.version {
		return nil
	}
	var pos int64
	if err := w.counterStmt.QueryRowContext(ctx).Scan(&pos); err != nil {
		return err
	}
	w.version = version
	switch {
	case w.last < 0:
		// The first look: whatever was written before it, the waiters
		// read anyway (there are none yet when StartFeed runs first).
		w.forum.hub.advance(0)
	case pos > w.last && w.forum.hub.own.foreign(w.last, pos):
		w.forum.hub.advance(pos)
	}
	w.last = max(w.last, pos)
	return nil
}

func (w *sqliteWatcher) close() {
	if w.conn != nil {
		w.versionStmt.Close()
		w.counterStmt.Close()
		w.conn.Close()
		w.conn = nil
	}
}

// ownWrites holds the log positions this process committed and announced
// since the watcher last looked, so that the watcher tells them from other
// processes' writes. On SQLite every transaction holds the write lock from
// its start (_txlock=immediate), so the positions one action takes are the
// whole range from its lowest to its highest.
type ownWrites struct {
	mu     sync.Mutex
	on     bool
	ranges [][2]int64
}

// ownWritesMax bounds the ranges kept while the watcher cannot look: past
// it the oldest are dropped, which only makes the watcher wake everyone
// for writes that were this process's own.
const ownWritesMax = 4096

func (o *ownWrites) start() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.on = true
}

// note records an action's positions lo..hi, after its commit.
func (o *ownWrites) note(lo, hi int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.on || lo <= 0 {
		return
	}
	if len(o.ranges) >= ownWritesMax {
		o.ranges = append(o.ranges[:0], o.ranges[len(o.ranges)/2:]...)
	}
	o.ranges = append(o.ranges, [2]int64{lo, hi})
}

// foreign reports whether some position in last+1..pos is not one of this
// process's, and forgets the ranges that end by pos. A commit of this
// process that is seen before it is noted counts as foreign: a wake too
// many, never one too few.
func (o *ownWrites) foreign(last, pos int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	var covered int64
	keep := o.ranges[:0]
	for _, r := range o.ranges {
		if lo, hi := max(r[0], last+1), min(r[1], pos); hi >= lo {
			covered += hi - lo + 1
		}
		if r[1] > pos {
			keep = append(keep, r)
		}
	}
	o.ranges = keep
	return covered < pos-last
}
