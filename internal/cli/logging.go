package cli

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
)

// Logging is the choice of --log-format and --log-level.
type Logging struct {
	Format string // "text" or "json"
	Level  slog.Level
}

// LogFlags adds --log-format and --log-level.
func (l *Logging) LogFlags(fs *flag.FlagSet) {
	l.Format = "text"
	fs.Func("log-format", "log line `format`: text (key=value) or json, one object a line (env PARLEY_LOG_FORMAT; default text)", func(v string) error {
		switch v {
		case "text", "json":
			l.Format = v
			return nil
		}
		return fmt.Errorf("want text or json")
	})
	fs.Func("log-level", "least `level` logged: debug, info, warn or error (env PARLEY_LOG_LEVEL; default info)", func(v string) error {
		return l.Level.UnmarshalText([]byte(strings.ToLower(v)))
	})
}

// Logger makes the logger chosen, writing to w, and makes it slog's
// default too, so that what logs through slog.Default (the database
// driver's logger, models.Open) follows the same format and level.
func (l Logging) Logger(w io.Writer) *slog.Logger {
	logger := slog.New(l.handler(w))
	slog.SetDefault(logger)
	return logger
}

// BufferedLogger is Logger for a server, whose lines are written in
// batches (lineBuffer): at most flushAfter late, warnings and errors at
// once. flush writes what waits; call it before the process ends.
func (l Logging) BufferedLogger(w io.Writer, flushAfter time.Duration) (logger *slog.Logger, flush func() error) {
	buf := newLineBuffer(w, flushAfter)
	logger = slog.New(flushingHandler{Handler: l.handler(buf), buf: buf})
	slog.SetDefault(logger)
	return logger, buf.Flush
}

func (l Logging) handler(w io.Writer) slog.Handler {
	opts := &slog.HandlerOptions{Level: l.Level}
	if l.Format == "json" {
		return slog.NewJSONHandler(w, opts)
	}
	return slog.NewTextHandler(w, opts)
}
