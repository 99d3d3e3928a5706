package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a writer that keeps each write apart.
type recorder struct {
	mu     sync.Mutex
	writes []string
	wrote  chan struct{}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.writes = append(r.writes, string(p))
	r.mu.Unlock()
	select {
	case r.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (r *recorder) all() (string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.writes, ""), len(r.writes)
}

// TestBufferedLoggerBatchesLines: request lines wait and go out together,
// in order; a warning goes out at once with every line before it; what
// waits goes out by itself after flushAfter, and with flush.
func TestBufferedLoggerBatchesLines(t *testing.T) {
	rec := &recorder{wrote: make(chan struct{}, 1)}
	logger, flush := Logging{Format: "text"}.BufferedLogger(rec, time.Hour)
	for i := range 100 {
		logger.Info("request", "n", i)
	}
	if got, n := rec.all(); n != 0 {
		t.Fatalf("info lines were written at once (%d writes): %q", n, got)
	}
	logger.Warn("trouble")
	got, n := rec.all()
	if n != 1 || strings.Count(got, "\n") != 101 || !strings.Contains(got, "n=0\n") || !strings.HasSuffix(got, "msg=trouble\n") ||
		strings.Index(got, "n=99\n") > strings.Index(got, "trouble") {
		t.Fatalf("after a warning, %d writes: %q", n, got)
	}
	logger.Info("request", "n", "last")
	if err := flush(); err != nil {
		t.Fatal(err)
	}
	if got, n := rec.all(); n != 2 || !strings.HasSuffix(got, "n=last\n") {
		t.Fatalf("after flush, %d writes: %q", n, got)
	}

	// Lines beyond lineBufferMax are written without waiting.
	rec2 := &recorder{wrote: make(chan struct{}, 1)}
	big, _ := Logging{Format: "json"}.BufferedLogger(rec2, time.Hour)
	body := strings.Repeat("x", 1000)
	for range 70 {
		big.Info("request", "pad", body)
	}
	if got, n := rec2.all(); n == 0 || len(got) < lineBufferMax {
		t.Fatalf("%d bytes of lines waited, %d writes", 70*1000, n)
	}

	// A line waits at most flushAfter.
	rec3 := &recorder{wrote: make(chan struct{}, 1)}
	soon, _ := Logging{Format: "text"}.BufferedLogger(rec3, time.Millisecond)
	soon.Info("request", "n", 1)
	<-rec3.wrote // the timer wrote it; the test would hang otherwise
	if got, _ := rec3.all(); !strings.Contains(got, "n=1") {
		t.Fatalf("after flushAfter: %q", got)
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)))
}

// BenchmarkRequestLine is a server's request line written to a file, line
// by line (Logger) and in batches (BufferedLogger), from many goroutines
// at once as under load: the batches spare each line its write system
// call and the handler's lock held across it.
func BenchmarkRequestLine(b *testing.B) {
	for _, buffered := range []bool{false, true} {
		name := "direct"
		if buffered {
			name = "buffered"
		}
		b.Run(name, func(b *testing.B) {
			f, err := os.CreateTemp(b.TempDir(), "log")
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			logger, flush := Logging{Format: "text"}.Logger(f), func() error { return nil }
			if buffered {
				logger, flush = Logging{Format: "text"}.BufferedLogger(f, 50*time.Millisecond)
			}
			b.SetParallelism(64)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					logger.LogAttrs(context.Background(), slog.LevelInfo, "request",
						slog.String("request_id", "0f3a9c1d2e4b5a6978877665"), slog.String("binding", "http"),
						slog.String("operation", "post"), slog.String("method", "POST"), slog.String("route", "/api/v1/messages"),
						slog.Int("status", 201), slog.Float64("duration_ms", 12.345), slog.String("identity", "agent-7"))
				}
			})
			flush()
		})
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
}
