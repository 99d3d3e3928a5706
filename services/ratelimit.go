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
	return f.count(ctx, tokenMeter(who.TokenID), f.buckets(operation))
}

// meterSessionPost counts a post of a signed-in web session against
// posts_per_minute, as Admit counts a token's: a human posting through the
// pages is held to the same rate as one posting with a token. Post calls
// it first, before reading the envelope, as a token's post is counted
// before its operation; other callers (a token's, already counted by
// Admit; the server's own, as the demo's) count nothing here.
//
// Reading: the counter is per identity, not per session: a human signed
// in from two browsers posts at the same rate as from one. A human's
// tokens keep counters of their own, as every token does. Only posts are
// counted (requests_per_minute is the API's: a page view is no request of
// the protocol).
func (f *Forum) meterSessionPost(ctx context.Context, who Caller) error {
	if !who.session {
		return nil
	}
	return f.count(ctx, sessionMeter(who.Identity), []bucketLimit{{bucketPosts, f.limits.PostsPerMinute}})
}

// meter is whose rate-limit counters a request counts in: a token's
// (rows of its id) or a signed-in human's (rows of token id 0, with the
// identity in the bucket's name: no token has id 0).
type meter struct {
	token    int64
	identity string // a session's identity; "" for a token
}

func tokenMeter(id int64) meter          { return meter{token: id} }
func sessionMeter(identity string) meter { return meter{identity: identity} }

// bucket is the name of b's row for this meter.
func (m meter) bucket(b string) string {
	if m.identity == "" {
		return b
	}
	return b + " " + m.identity
}

// whom names the meter in a refusal.
func (m meter) whom() string {
	if m.identity == "" {
		return "this token"
	}
	return m.identity
}

func (m meter) counts() bool { return m.token != 0 || m.identity != "" }

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
func (f *Forum) count(ctx context.Context, m meter, buckets []bucketLimit) error {
	if !m.counts() {
		return nil
	}
	now := f.now().UTC()
	window := now.Truncate(time.Minute)
	var values []string
	var args []any
	for _, b := range buckets {
		if b.limit > 0 {
			values = append(values, "(?, ?, ?, 1)")
			args = append(args, m.token, m.bucket(b.bucket), window.Unix())
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
	return f.overLimit(ctx, m, buckets, counted, now)
}

// overLimit refuses the first bucket, in the order given, whose count in
// the current window went over its limit; counted holds the counts the
// request's statement answered, by the rows' bucket names. A count of 1
// starts a new window: the meter's older windows of that bucket are
// deleted then.
func (f *Forum) overLimit(ctx context.Context, m meter, buckets []bucketLimit, counted map[string]int, now time.Time) error {
	window := now.Truncate(time.Minute)
	for _, b := range buckets {
		if counted[m.bucket(b.bucket)] == 1 {
			err := f.db.WithContext(ctx).Exec("DELETE FROM rate_windows WHERE token_id = ? AND bucket = ? AND window_start < ?",
				m.token, m.bucket(b.bucket), window.Unix()).Error
			if err != nil {
				return fmt.Errorf("rate limit: %w", err)
			}
		}
	}
	for _, b := range buckets {
		if b.limit > 0 && counted[m.bucket(b.bucket)] > b.limit && !(b.bucket == bucketPosts && mutant("posts_rate")) {
			retry := int(window.Add(time.Minute).Sub(now).Seconds() + 0.999)
			r := Refuse(RateLimited, "more than %d %s per minute for %s; retry in %d s", b.limit, b.bucket, m.whom(), retry)
			r.RetryAfter = retry
			return r
		}
	}
	return nil
}
