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
// reads again, until wait has passed or the caller is gone. Between reads
// it holds no database connection: it waits on the hub only. Each read is
// bounded by the query timeout, so a frozen database still answers
// unavailable in time.
//
// Once its first read found nothing, the call holds a slot of
// waits_per_token for the time it may still wait (openWait; beyond the cap
// it is refused, rate_limited), released when it returns; and at each
// heartbeat its process re-checks the tokens of all its waiting calls in
// one query (store_revocations.go), and the call answers token_invalid
// once its token is revoked. The binding ends ctx when the client goes away, which
// frees the slot at once.
func (f *Forum) waiting(ctx context.Context, who Caller, wait time.Duration, news func() <-chan struct{}, read func(context.Context) (bool, error)) error {
	give := time.Now().Add(wait)
	var gone <-chan struct{} // set once the call waits: its token's revocation
	for {
		signal := news() // before the read: an advance during it is not missed
		qctx, cancel := context.WithTimeout(ctx, f.queryTimeout)
		found, err := read(qctx)
		cancel()
		left := time.Until(give)
		if err != nil || found || left <= 0 {
			return err
		}
		if gone == nil {
			release, err := f.openWait(ctx, who, left)
			if err != nil {
				return err
			}
			defer release()
			var stop func()
			gone, stop = f.watchToken(who)
			defer stop()
			if gone == nil {
				gone = make(chan struct{}) // no token: nothing to revoke
			}
		}
		if done, err := f.await(ctx, left, signal, gone); done || err != nil {
			return err
		}
	}
}

// await waits for signal, at most left: false when the signal came (read
// again), true when left passed or ctx ended; the caller's refusal once
// its token is found revoked (gone, see watchToken).
func (f *Forum) await(ctx context.Context, left time.Duration, signal, gone <-chan struct{}) (bool, error) {
	timer := time.NewTimer(left)
	defer timer.Stop()
	select {
	case <-signal:
		return false, nil
	case <-timer.C:
		return true, nil
	case <-ctx.Done():
		return true, nil
	case <-gone:
		return true, revokedRefusal()
	}
}

// QueryTimeout is the bound of one database round of an operation; the
// bindings give a request that does not wait this deadline, and a waiting
// request this plus its wait.
func (f *Forum) QueryTimeout() time.Duration { return f.queryTimeout }
