package services

import (
	"context"
	"time"
)

// DefaultQueryTimeout bounds each database round of a waiting read, whose
// request as a whole may last wait_max_seconds.
const DefaultQueryTimeout = 5 * time.Second

// waiting runs read — one query of the database with the caller's cursor,
// reporting whether it found anything — and, while it finds nothing, waits
// for news that may concern it (news gives the hub's channel for that) and
// reads again, until wait has passed or the
// caller is gone. Between reads it holds no database connection: it waits
// on the hub only. Each read is bounded by the query timeout, so a frozen
// database still answers unavailable in time.
func (f *Forum) waiting(ctx context.Context, wait time.Duration, news func() <-chan struct{}, read func(context.Context) (bool, error)) error {
	give := time.Now().Add(wait)
	for {
		signal := news() // before the read: an advance during it is not missed
		qctx, cancel := context.WithTimeout(ctx, f.queryTimeout)
		found, err := read(qctx)
		cancel()
		left := time.Until(give)
		if err != nil || found || left <= 0 {
			return err
		}
		timer := time.NewTimer(left)
		select {
		case <-signal:
			timer.Stop()
		case <-timer.C:
			return nil
		case <-ctx.Done():
			timer.Stop()
			return nil
		}
	}
}

// QueryTimeout is the bound of one database round of an operation; the
// bindings give a request that does not wait this deadline, and a waiting
// request this plus its wait.
func (f *Forum) QueryTimeout() time.Duration { return f.queryTimeout }
