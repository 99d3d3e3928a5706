package main

import (
	"context"
	"log/slog"
	"time"

	"parley/services"
)

// defaultSweep is the least time between two sweeps while the forum is
// written to: after a write (of any process) the sweep waits this long,
// then escalates what is due and looks up the next deadline again; a
// deadline the sweep knows of is met at its time. Each sweep is one indexed
// query when nothing is due.
const defaultSweep = 250 * time.Millisecond

// sweepIdle bounds how long the sweep sleeps with no write and no
// deadline in sight, in case it missed news of one.
const sweepIdle = time.Minute

// sweepDeadlines escalates overdue turns until ctx ends (docs/protocol.md
// §14 rule 4), and closes done when it has stopped: at the earliest
// deadline it knows, after a write (which may have set an earlier one, at
// most every `every`), and at least every sweepIdle. So an idle forum costs
// its database one query a minute, not four a second (issue 31). Reads
// escalate what they see as well; the sweep is for the asks nobody reads.
// Several servers may sweep one database: that an ask escalates once is
// guaranteed by the database, not by this loop.
func sweepDeadlines(ctx context.Context, forum *services.Forum, every time.Duration, logger *slog.Logger, done chan<- struct{}) {
	defer close(done)
	for {
		escalateAllDue(ctx, forum, logger)
		next, news, err := forum.NextDue(ctx)
		wait := sweepIdle
		switch {
		case err != nil:
			if ctx.Err() == nil {
				logger.Warn("deadline sweep", "err", err)
			}
			wait = every
		case next != nil:
			if until := time.Until(*next); until > 0 {
				wait = min(wait, until)
			} else {
				wait = every // due, yet not escalated (its turn moved): look again later
			}
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		case <-news:
			timer.Stop()
			if !pause(ctx, every) { // let a burst of writes pass: one sweep serves them
				return
			}
		}
	}
}

// pause waits d, and reports false if ctx ended first.
func pause(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// escalateAllDue escalates, batch after batch, every turn now past its
// deadline.
func escalateAllDue(ctx context.Context, forum *services.Forum, logger *slog.Logger) {
	for {
		n, err := forum.EscalateDue(ctx)
		if err != nil {
			if ctx.Err() == nil {
				logger.Warn("deadline sweep", "err", err)
			}
			return
		}
		if n == 0 {
			return
		}
		logger.Info("escalated", "threads", n)
	}
}
