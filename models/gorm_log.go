package models

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// slowQuery is the duration past which a statement is logged as slow.
const slowQuery = 500 * time.Millisecond

// slogGORM is GORM's logger through slog's default logger (so it takes
// the format and level that `parley serve --log-format/--log-level` set):
// warnings and errors only, never a statement's parameters (ParamsFilter: a
// statement logged shows its placeholders only, never a token hash or a
// message body), and without GORM's own
// source-path prefix. A record not found is an answer, not a fault, and a
// statement on a pool already closed is the shutdown racing a last read
// (the stdio server's end): both are logged at debug only.
type slogGORM struct{}

// ParamsFilter drops a statement's values from what Trace is given, as
// GORM's own ParameterizedQueries does.
func (slogGORM) ParamsFilter(_ context.Context, sql string, _ ...any) (string, []any) {
	return sql, nil
}

func (slogGORM) LogMode(logger.LogLevel) logger.Interface { return slogGORM{} }

func (slogGORM) Info(ctx context.Context, msg string, args ...any) {
	slog.Default().DebugContext(ctx, "gorm: "+strings.TrimSpace(fmt.Sprintf(msg, args...)))
}

// Warn holds GORM's setup notices too ("removing callback … from
// <source path>"): their path is the build machine's, cut off here.
func (slogGORM) Warn(ctx context.Context, msg string, args ...any) {
	text := strings.TrimSpace(fmt.Sprintf(msg, args...))
	if strings.HasPrefix(text, "removing callback") {
		text, _, _ = strings.Cut(text, " from ")
		slog.Default().DebugContext(ctx, "gorm: "+text)
		return
	}
	slog.Default().WarnContext(ctx, "gorm: "+text)
}

func (slogGORM) Error(ctx context.Context, msg string, args ...any) {
	slog.Default().ErrorContext(ctx, "gorm: "+strings.TrimSpace(fmt.Sprintf(msg, args...)))
}

// Trace logs a failed or slow statement.
func (slogGORM) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	elapsed := time.Since(begin)
	log := slog.Default()
	switch {
	case err != nil && (errors.Is(err, gorm.ErrRecordNotFound) || strings.Contains(err.Error(), "sql: database is closed")):
		if log.Enabled(ctx, slog.LevelDebug) {
			sql, _ := fc()
			log.DebugContext(ctx, "sql", "err", err, "sql", sql)
		}
	case err != nil && errors.Is(err, context.Canceled):
		// The caller went away: its request's log line says so.
	case err != nil:
		sql, rows := fc()
		log.WarnContext(ctx, "sql failed", "err", err, "sql", sql, "rows", rows, "ms", elapsed.Milliseconds())
	case elapsed > slowQuery:
		sql, rows := fc()
		log.WarnContext(ctx, "sql slow", "sql", sql, "rows", rows, "ms", elapsed.Milliseconds())
	}
}
