package web

import (
	"log/slog"
	"sync"
	"time"

	"parley/services"
)

// faults logs the errors behind the answers that are not the protocol's
// refusals. A fault of ours (500 internal) is logged every time, at
// ERROR. Storage unreachable (503 unavailable) is logged at WARN at most
// once a second, with the count of those left out since the last such
// line: when the database goes away, or a burst outruns the pool (ten
// thousand waiting calls admitted at once), every request fails the same
// way, and a line each at ERROR buried the first one under thousands.
// Each request's own line (status 503, reason unavailable) is written as
// ever; a count left at the end of a burst is told by the next one.
//
// Scaling: per process, as the log is.
type faults struct {
	log *slog.Logger
	now func() time.Time

	mu      sync.Mutex
	last    time.Time // the last unavailable line
	skipped int       // unavailable errors not logged since it
}

// unavailableEvery is the least time between two lines of unavailable
// storage.
const unavailableEvery = time.Second

func newFaults(log *slog.Logger) *faults { return &faults{log: log, now: time.Now} }

// report logs err, which the answer r stands for, with attrs saying which
// request.
func (f *faults) report(err error, r *services.Refusal, attrs ...any) {
	attrs = append(attrs, "err", err)
	if r == nil || r.Reason != services.Unavailable {
		f.log.Error("request failed", attrs...)
		return
	}
	f.mu.Lock()
	now := f.now()
	if !f.last.IsZero() && now.Sub(f.last) < unavailableEvery {
		f.skipped++
		f.mu.Unlock()
		return
	}
	skipped := f.skipped
	f.last, f.skipped = now, 0
	f.mu.Unlock()
	if skipped > 0 {
		attrs = append(attrs, "unlogged_since_last", skipped)
	}
	f.log.Warn("storage unavailable", attrs...)
}
