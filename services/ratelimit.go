package services

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Rate-limit buckets, each with its per-minute limit from Limits.
const (
	bucketRequests = "requests"
	bucketPosts    = "posts"
)

// Admit authenticates a bearer token and counts the request against the
// token's rate limits (PARLEY.md §9): every request against
// requests_per_minute, a post also against posts_per_minute. Bindings call
// it once per request, before the operation; operation is the name from
// Operations.
//
// The counters live in the database (table rate_windows), so the limits
// hold across any number of server processes. They are fixed one-minute
// windows: simple and exact per window, at the cost of allowing up to
// twice the rate across a window boundary.
func (f *Forum) Admit(ctx context.Context, token, operation string) (Caller, error) {
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
func (f *Forum) Meter(ctx context.Context, who Caller, operation string) error {
	if who.Identity == "" {
		return Refuse(TokenMissing, "send Authorization: Bearer <token>")
	}
	buckets := []bucketLimit{{bucketRequests, f.limits.RequestsPerMinute}}
	if operation == "post" {
		buckets = append(buckets, bucketLimit{bucketPosts, f.limits.PostsPerMinute})
	}
	return f.count(ctx, who, buckets)
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
	var counted []struct {
		Bucket string
		Count  int
	}
	err := f.db.WithContext(ctx).Raw(`INSERT INTO rate_windows (token_id, bucket, window_start, count) VALUES `+strings.Join(values, ", ")+`
		ON CONFLICT (token_id, bucket, window_start) DO UPDATE SET count = rate_windows.count + 1
		RETURNING bucket, count`, args...).Scan(&counted).Error
	if err != nil {
		return fmt.Errorf("rate limit: %w", err)
	}
	over := map[string]int{}
	for _, c := range counted {
		if c.Count == 1 {
			// First request of a new window: forget the token's older ones.
			err := f.db.WithContext(ctx).Exec("DELETE FROM rate_windows WHERE token_id = ? AND bucket = ? AND window_start < ?",
				who.TokenID, c.Bucket, window.Unix()).Error
			if err != nil {
				return fmt.Errorf("rate limit: %w", err)
			}
		}
		over[c.Bucket] = c.Count
	}
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
