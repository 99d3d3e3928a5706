package main

import (
	"context"
	"log/slog"
	"time"

	"parley/services"
)

// defaultSweep is how often serve escalates the asks whose reply_by has
// passed. Well under a second, so that an ask nobody reads still escalates
// within one second of its deadline; each sweep is one indexed query when
// nothing is due.
const defaultSweep = 250 * time.Millisecond

// sweepDeadlines escalates overdue turns every interval until ctx ends
// (docs/protocol.md §14 rule 4), and closes done when it has stopped. Reads
// escalate what they see as well; the sweep is for the asks nobody reads.
// Several servers may sweep one database: that an ask escalates once is
// guaranteed by the database, not by this loop.
func sweepDeadlines(ctx context.Context, forum *services.Forum, every time.Duration, logger *slog.Logger, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for {
			n, err := forum.EscalateDue(ctx)
			if err != nil {
				if ctx.Err() == nil {
					logger.Warn("deadline sweep", "err", err)
				}
				break
			}
			if n == 0 {
				break
			}
			logger.Info("escalated", "threads", n)
		}
	}
}
