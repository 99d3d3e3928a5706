package services

import (
	"context"
	"fmt"
	"strings"
	"time"

	"parley/models"
)

// Rate-limit buckets, each with its per-minute limit from Limits.
const (
	bucketRequests = "requests"
	bucketPosts    = "posts"
)

// Admit authenticates a bearer token and counts the request against the
// token's rate limits (docs/protocol.md §9): every request against
// requests_per_minute, a post also against posts_per_minute. Bindings call
// it once per request, before the operation; operation names its row of
// Operations.
//
// The counters live in the database (table rate_windows), so the limits
// hold across any number of server processes. They are fixed one-minute
// windows: simple and exact per window, at the cost of allowing up to
// twice the rate across a window boundary.
func (f *Forum) Admit(ctx context.Context, token string, operation OpName) (Caller, error) {
	if models.IsPostgresDB(f.db) {
		return f.admitPG(ctx, token, operation)
	}
	who, err := f.Authenticate(ctx, token)
	if err != nil {
		return Caller{}, err
	}
	if err := f.Meter(ctx, who, operation); err != nil {
		return Caller{}, err
	}
	return who, nil
}

// Meter counts one request of an authenticated caller against its token's
// rate limits, as Admit does; for a binding that authenticated the request
// already (MCP's Streamable HTTP transport checks the token of every
// message, tool calls included).
func (f *Forum) Meter(ctx context.Context, who Caller, operation OpName) error {
	if who.Identity == "" {
		return Refuse(TokenMissing, "send Authorization: Bearer <token>")
	}
	return f.count(ctx, who, f.buckets(operation))
}

// buckets are the rate-limit buckets a request of operation counts in.
func (f *Forum) buckets(operation OpName) []bucketLimit {
	buckets := []bucketLimit{{bucketRequests, f.limits.RequestsPerMinute}}
	if operation == OpPost {
		buckets = append(buckets, bucketLimit{bucketPosts, f.limits.PostsPerMinute})
	}
	return buckets
}

type bucketLimit struct {
	bucket string
	limit  int
}

// count counts one request in each bucket with a limit, in one statement
// (a post counts against two: one round trip less per post), and refuses
// the first bucket, in the order given, that went over its limit.
//
// Reading: a request refused for its requests bucket still counts as a
// post. This changes nothing anyone sees: once the requests bucket is over,
// every request of the token is refused until that window ends, and the
// posts window ends with it.
func (f *Forum) count(ctx context.Context, who Caller, buckets []bucketLimit) error {
	if who.TokenID == 0 {
		return nil
	}
	now := f.now().UTC()
	window := now.Truncate(time.Minute)
	var values []string
	var args []any
	for _, b := range buckets {
		if b.limit > 0 {
			values = append(values, "(?, ?, ?, 1)")
			args = append(args, who.TokenID, b.bucket, window.Unix())
		}
	}
	if len(values) == 0 {
		return nil
	}
	rows, err := f.db.WithContext(ctx).Raw(`INSERT INTO rate_windows (token_id, bucket, window_start, count) VALUES `+strings.Join(values, ", ")+`
		ON CONFLICT (token_id, bucket, window_start) DO UPDATE SET count = rate_windows.count + 1
		RETURNING bucket, count`, args...).Rows()
	if err != nil {
		return fmt.Errorf("rate limit: %w", err)
	}
	defer rows.Close()
	counted := map[string]int{}
	for rows.Next() {
		var bucket string
		var n int
		if err := rows.Scan(&bucket, &n); err != nil {
			return fmt.Errorf("rate limit: %w", err)
		}
		counted[bucket] = n
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("rate limit: %w", err)
	}
	rows.Close() // before overLimit's statement: SQLite has one connection
	return f.overLimit(ctx, who.TokenID, buckets, counted, now)
}

// overLimit refuses the first bucket, in the order given, whose count in
// the current window went over its limit; counted holds the counts the
// request's statement answered. A count of 1 starts a new window: the
// token's older windows of that bucket are deleted then.
func (f *Forum) overLimit(ctx context.Context, token int64, buckets []bucketLimit, counted map[string]int, now time.Time) error {
	window := now.Truncate(time.Minute)
	for _, b := range buckets {
		if counted[b.bucket] == 1 {
			err := f.db.WithContext(ctx).Exec("DELETE FROM rate_windows WHERE token_id = ? AND bucket = ? AND window_start < ?",
				token, b.bucket, window.Unix()).Error
			if err != nil {
				return fmt.Errorf("rate limit: %w", err)
			}
		}
	}
	over := counted
	for _, b := range buckets {
		if b.limit > 0 && over[b.bucket] > b.limit {
			retry := int(window.Add(time.Minute).Sub(now).Seconds() + 0.999)
			r := Refuse(RateLimited, "more than %d %s per minute for this token; retry in %d s", b.limit, b.bucket, retry)
			r.RetryAfter = retry
			return r
		}
	}
	return nil
}
