// Package faultlog logs the errors behind the answers that are not the
// protocol's refusals, the same way for both bindings. A fault of ours
// (500 internal) is logged every time, at ERROR. Storage unreachable (503
// unavailable) is logged at WARN at most once a second, with the count of
// those left out since the last such line: when the database goes away,
// or a burst outruns the pool (ten thousand waiting calls admitted at
// once), every request fails the same way, and a line each at ERROR
// buried the first one under thousands. Each request's own line (status
// 503, reason unavailable) is written as ever; a count left at the end of
// a burst is told by the next one.
//
// Scaling: a Log counts within one process, for the code that holds it
// (the web binding, the MCP tools, the MCP gate), as the log is written.
package faultlog

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"parley/services"
)

// Every is the least time between two lines of unavailable storage.
const Every = time.Second

// Log writes the fault lines of one binding.
type Log struct {
	log *slog.Logger
	now func() time.Time

	mu      sync.Mutex
	last    time.Time // the last unavailable line
	skipped int       // unavailable errors not logged since it
}

// New returns a Log writing to log.
func New(log *slog.Logger) *Log { return &Log{log: log, now: time.Now} }

// Report logs err, which the answer r stands for (services.AsRefusal's,
// nil when there is none), under msg with attrs saying which request.
func (l *Log) Report(ctx context.Context, msg string, err error, r *services.Refusal, attrs ...any) {
	attrs = append(attrs, "err", err)
	if r == nil || r.Reason != services.Unavailable {
		l.log.ErrorContext(ctx, msg, attrs...)
		return
	}
	l.mu.Lock()
	now := l.now()
	if !l.last.IsZero() && now.Sub(l.last) < Every {
		l.skipped++
		l.mu.Unlock()
		return
	}
	skipped := l.skipped
	l.last, l.skipped = now, 0
	l.mu.Unlock()
	attrs = append(attrs, "in", msg)
	if skipped > 0 {
		attrs = append(attrs, "unlogged_since_last", skipped)
	}
	l.log.WarnContext(ctx, "storage unavailable", attrs...)
}
