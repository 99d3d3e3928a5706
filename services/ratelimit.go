package services

import (
	"context"
	"fmt"
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
	if err := f.count(ctx, who, bucketRequests, f.limits.RequestsPerMinute); err != nil {
		return err
	}
	if operation == "post" {
		return f.count(ctx, who, bucketPosts, f.limits.PostsPerMinute)
	}
	return nil
}

func (f *Forum) count(ctx context.Context, who Caller, bucket string, limit int) error {
	if limit <= 0 || who.TokenID == 0 {
		return nil
	}
	now := f.now().UTC()
	window := now.Truncate(time.Minute)
	var n int
	err := f.db.WithContext(ctx).Raw(`INSERT INTO rate_windows (token_id, bucket, window_start, count) VALUES (?, ?, ?, 1)
		ON CONFLICT (token_id, bucket, window_start) DO UPDATE SET count = rate_windows.count + 1
		RETURNING count`, who.TokenID, bucket, window.Unix()).Scan(&n).Error
	if err != nil {
		return fmt.Errorf("rate limit: %w", err)
	}
	if n == 1 {
		// First request of a new window: forget the token's older ones.
		err := f.db.WithContext(ctx).Exec("DELETE FROM rate_windows WHERE token_id = ? AND bucket = ? AND window_start < ?",
			who.TokenID, bucket, window.Unix()).Error
		if err != nil {
			return fmt.Errorf("rate limit: %w", err)
		}
	}
	if n > limit {
		retry := int(window.Add(time.Minute).Sub(now).Seconds() + 0.999)
		r := Refuse(RateLimited, "more than %d %s per minute for this token; retry in %d s", limit, bucket, retry)
		r.RetryAfter = retry
		return r
	}
	return nil
}
