package main

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// dbCPU measures the CPU time PostgreSQL spends on one database: the
// backends connected to it (pg_stat_activity), each read from /proc, every
// 50 ms while a measure runs, so that a backend which ends during it
// (pgbench's, at its end) is counted up to its last sample. Work the
// cluster does for every database (WAL writer, checkpointer) is not in it;
// neither is this sampler's own backend. It needs the database on this
// machine.
type dbCPU struct {
	conn *pgx.Conn
	mu   sync.Mutex
	base map[int]float64 // CPU seconds at the start, per backend pid
	last map[int]float64 // the latest sample
	stop chan struct{}
	done chan struct{}
}

func newDBCPU(ctx context.Context, url string) (*dbCPU, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	return &dbCPU{conn: conn}, nil
}

// sample reads every backend's CPU time now.
func (d *dbCPU) sample() map[int]float64 {
	rows, err := d.conn.Query(context.Background(),
		"SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
	if err != nil {
		return nil
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil
	}
	out := make(map[int]float64, len(pids))
	for _, p := range pids {
		if s := cpuSeconds(int(p)); s > 0 {
			out[int(p)] = s
		}
	}
	return out
}

// start begins a measure.
func (d *dbCPU) start() {
	if d == nil {
		return
	}
	d.base, d.last = d.sample(), map[int]float64{}
	d.stop, d.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(d.done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			d.merge(d.sample())
			select {
			case <-d.stop:
				return
			case <-t.C:
			}
		}
	}()
}

func (d *dbCPU) merge(s map[int]float64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for p, v := range s {
		d.last[p] = max(d.last[p], v)
	}
}

// end ends the measure and answers the database's CPU seconds in it.
func (d *dbCPU) end() float64 {
	if d == nil {
		return 0
	}
	close(d.stop)
	<-d.done
	d.merge(d.sample())
	total := 0.0
	for p, v := range d.last {
		total += max(0, v-d.base[p])
	}
	return total
}
