package cli

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// A server writes a line for every request. Written one by one, each line
// was a write system call made under the handler's lock: when one ask
// woke ten thousand waiting calls, their answering goroutines queued on
// that lock, each holding it across its own system call, and the lines
// cost a quarter of the wake's time (docs/performance.md). lineBuffer
// gathers the lines and writes them together: once flushAfter has passed
// since the first line waiting, once lineBufferMax bytes wait, at once
// for a line at WARN or above (with every line before it, in order), and
// when the server stops. A line may so reach the log up to flushAfter
// late; a crash that kills the process outright (SIGKILL, the OOM killer)
// loses at most that much of the request lines, never a warning or error.

// lineBufferMax is how many bytes of lines wait at most before a write.
const lineBufferMax = 64 << 10

type lineBuffer struct {
	w     io.Writer
	after time.Duration

	writing sync.Mutex // held across a write, so that batches keep their order
	mu      sync.Mutex // guards buf and armed
	buf     []byte
	armed   bool // a flush is scheduled
	timer   *time.Timer
}

func newLineBuffer(w io.Writer, after time.Duration) *lineBuffer {
	b := &lineBuffer{w: w, after: after}
	b.timer = time.AfterFunc(time.Hour, func() { b.Flush() })
	b.timer.Stop()
	return b
}

// Write keeps p (one log line: slog's handlers write each in one call)
// for the next batch.
func (b *lineBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	full := len(b.buf)+len(p) > lineBufferMax
	b.buf = append(b.buf, p...)
	if !b.armed && !full {
		b.armed = true
		b.timer.Reset(b.after)
	}
	b.mu.Unlock()
	if full {
		b.Flush()
	}
	return len(p), nil
}

// Flush writes every line waiting, in one write.
func (b *lineBuffer) Flush() error {
	b.writing.Lock()
	defer b.writing.Unlock()
	b.mu.Lock()
	out := b.buf
	b.buf = make([]byte, 0, min(max(cap(out), 4096), lineBufferMax+4096))
	b.armed = false
	b.timer.Stop()
	b.mu.Unlock()
	if len(out) == 0 {
		return nil
	}
	_, err := b.w.Write(out)
	return err
}

// flushingHandler writes the lines waiting after a record at WARN or
// above, so that warnings and errors are never late.
type flushingHandler struct {
	slog.Handler
	buf *lineBuffer
}

func (h flushingHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		if ferr := h.buf.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (h flushingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushingHandler{h.Handler.WithAttrs(attrs), h.buf}
}

func (h flushingHandler) WithGroup(name string) slog.Handler {
	return flushingHandler{h.Handler.WithGroup(name), h.buf}
}
