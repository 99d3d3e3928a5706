package services

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// admitPG is Admit on PostgreSQL in one round trip instead of two or three:
// one statement reads the token, counts the request in its rate-limit
// buckets — only when the secret's hash matches and the token is not
// revoked, so an invalid token counts nothing, as with Authenticate before
// Meter — and reads the earliest reply-by deadline not yet escalated, which
// lets the request's read skip the due-escalation probe (see dueProbe).
// The hash is compared again, in constant time, on the row the statement
// answers; the rate limits are refused exactly as count refuses them.
func (f *Forum) admitPG(ctx context.Context, token string, operation OpName) (Caller, error) {
	public, sum, err := splitToken(token)
	if err != nil {
		return Caller{}, err
	}
	now := f.now().UTC()
	buckets := f.buckets(operation)
	var names []string
	for _, b := range buckets {
		if b.limit > 0 {
			names = append(names, b.bucket)
		}
	}
	args := []any{public}
	if len(names) > 0 {
		args = append(args, now.Truncate(time.Minute).Unix(), sum[:])
	}
	// With read replicas, the WAL position a recent writer's reads need
	// (replicas.go); without, a constant NULL.
	if f.reads != nil {
		args = append(args, now.Add(-f.reads.readYourWritesWindow()))
	}
	var (
		id                         int64
		hash                       []byte
		identity, kind, label, rts string
		owner                      string
		revoked, lastUsed, nextDue *time.Time
		requests, posts            sql.NullInt64
		wroteAt                    sql.NullString
	)
	err = scanPgx(ctx, f.db, admitStatement(names, f.reads != nil), args, &id, &hash, &identity, &kind, &label, &rts, &owner, &revoked, &lastUsed, &requests, &posts, &nextDue, &wroteAt)
	if errors.Is(err, sql.ErrNoRows) {
		return Caller{}, errTokenInvalid()
	}
	if err != nil {
		return Caller{}, fmt.Errorf("admit: %w", err)
	}
	if !tokenMatches(sum, hash, revoked) {
		return Caller{}, errTokenInvalid()
	}
	if err := f.noteTokenUse(ctx, id, lastUsed); err != nil {
		return Caller{}, err
	}
	counts := map[string]int{bucketRequests: int(requests.Int64), bucketPosts: int(posts.Int64)}
	if err := f.overLimit(ctx, tokenMeter(id), buckets, counts, now); err != nil {
		return Caller{}, err
	}
	rights, _ := ParseRights(rts)
	return Caller{Identity: identity, Kind: AuthorKind(kind), Rights: rights, Label: label, TokenID: id,
		Owner: ownerOf(identity, kind, owner),
		due:   dueProbe{known: true, next: nextDue}, wroteAt: wroteAt.String}, nil
}

// admitStatements are admitPG's statements by their buckets and replicas:
// a few constant texts (the window is a parameter, so the text does not
// change each minute, which made every connection prepare it anew), built
// and numbered once rather than on every request (GORM's Raw rebuilt the
// text byte by byte each time: 4 % of a post's allocations).
var admitStatements sync.Map // string → fixedSQL

// admitStatement is admitPG's statement for the buckets named (constants
// of this package, never input) and with or without read replicas.
func admitStatement(buckets []string, replicas bool) fixedSQL {
	key := strings.Join(buckets, ",") + "/" + strconv.FormatBool(replicas)
	if s, ok := admitStatements.Load(key); ok {
		return s.(fixedSQL)
	}
	counted := `SELECT NULL::text AS bucket, NULL::int AS count WHERE false`
	if len(buckets) > 0 {
		values := make([]string, len(buckets))
		for i, b := range buckets {
			values[i] = "('" + b + "')"
		}
		counted = `INSERT INTO rate_windows (token_id, bucket, window_start, count)
			SELECT tok.id, b.bucket, ?::bigint, 1
			FROM tok, (VALUES ` + strings.Join(values, ", ") + `) AS b(bucket)
			WHERE tok.secret_hash = ? AND tok.revoked_at IS NULL
			ON CONFLICT (token_id, bucket, window_start) DO UPDATE SET count = rate_windows.count + 1
			RETURNING bucket, count`
	}
	wrote := `NULL::text`
	if replicas {
		wrote = recentWriteSQL("tok.identity")
	}
	text := `WITH tok AS (
			SELECT id, secret_hash, identity, author_kind, label, rights, owner, revoked_at, last_used_at FROM tokens WHERE public_id = ?),
		counted AS (` + counted + `)
		SELECT tok.id, tok.secret_hash, tok.identity, tok.author_kind, tok.label, tok.rights, tok.owner, tok.revoked_at, tok.last_used_at,
			(SELECT count FROM counted WHERE bucket = 'requests'), (SELECT count FROM counted WHERE bucket = 'posts'),
			(SELECT min(reply_by) FROM threads WHERE reply_by IS NOT NULL AND escalated_at IS NULL),
			` + wrote + `
		FROM tok`
	s := fixed(text)
	admitStatements.Store(key, s)
	return s
}

// dueProbe is what a request's admission learned of reply-by deadlines: the
// earliest deadline of a turn not yet escalated (nil: none), read from the
// database in the admission's statement.
//
// A read escalates what is due before it reads (escalateDue); with a probe
// it skips that query when its own clock has not reached the earliest
// deadline, so no turn can be due. This holds with any number of server
// processes on one database: the probe is a read of the shared database,
// not state kept by this process; a turn another process escalates
// meanwhile only makes the read run the query and find nothing. A turn
// whose deadline is set after the admission (a new ask with reply_by, a
// moved turn) and passes before the read is left to the next read or the
// sweep — as a deadline passing between the query and the thread's read
// always was.
type dueProbe struct {
	known bool
	next  *time.Time
}
