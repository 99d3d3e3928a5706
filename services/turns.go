package services

import (
	"context"

	"golang.org/x/sync/semaphore"
	"gorm.io/gorm"

	"parley/models"
)

// Turns at the database, first come, first served.
//
// database/sql hands a freed connection of its pool to a random one of the
// calls waiting for it, so under load some requests wait many times longer
// than others: 64 agents posting through a pool of 16 saw a p99 2.2–2.5×
// that of the bare handler, whose pool (pgxpool) serves its waiters in
// order. A request that answers at once takes a turn before its work and
// gives it back at its end; there are as many turns as the pool has
// connections, so the requests that hold one seldom wait in the pool, and
// the others wait for a turn in the order they came (a semaphore, which
// serves its waiters in order). With turns the same 64 agents saw
// 1.24–1.62×, 1.5× or less in five rounds of six, for 2–5 % fewer posts
// (docs/performance.md).
//
// Waiting reads and streams take no turn: they hold one for as long as
// they wait, and read the database only now and then. The turns are this
// process's alone, as its pool is: servers share nothing by them.

// turns is the gate; nil lets every request through at once.
type turns struct{ sem *semaphore.Weighted }

// newTurns gives db's pool as many turns as it has connections: on
// PostgreSQL, with a bounded pool. SQLite's writers queue in order for
// its one write lock already (models/sqlite_writer.go).
func newTurns(db *gorm.DB) *turns {
	if db == nil || !models.IsPostgresDB(db) { // nil: a Forum for parsing alone
		return nil
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil
	}
	n := sqlDB.Stats().MaxOpenConnections
	if n <= 0 {
		return nil
	}
	return &turns{sem: semaphore.NewWeighted(int64(n))}
}

// Turn waits for a turn at the database (see above) and returns the
// function that gives it back, to be called once the request's work is
// done. It fails only when ctx ends first: nothing was done.
func (f *Forum) Turn(ctx context.Context) (release func(), err error) {
	t := f.gate
	if t == nil {
		return func() {}, nil
	}
	if err := t.sem.Acquire(ctx, 1); err != nil {
		return nil, err
	}
	return func() { t.sem.Release(1) }, nil
}
