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
// one statement reads the token, claims units of its rate-limit buckets
// that this process's leases do not cover (rate_leases.go) — only when
// the secret's hash matches and the token is not revoked, so an invalid
// token counts nothing, as with Authenticate before Meter — and reads the
// earliest reply-by deadline not yet escalated, which lets the request's
// read skip the due-escalation probe (see dueProbe).
// The hash is compared again, in constant time, on the row the statement
// answers; the rate limits are refused as count refuses them, a request
// at a time.
func (f *Forum) admitPG(ctx context.Context, token string, operation OpName) (Caller, error) {
	public, sum, err := splitToken(token)
	if err != nil {
		return Caller{}, err
	}
	now := f.now().UTC()
	window := windowOf(now)
	// Each bucket is counted from this process's lease when it holds a
	// unit, else by a claim in the statement (rate_leases.go).
	buckets := f.buckets(operation)
	var claims []leaseClaim
	var taken []leaseKey
	for _, b := range buckets {
		if b.limit <= 0 {
			continue
		}
		key := leaseKey{public, b.bucket}
		if took, n := f.leases.take(key, window, b.limit); took {
			taken = append(taken, key)
		} else {
			claims = append(claims, leaseClaim{b, key, n})
		}
	}
	names := make([]string, len(claims))
	args := []any{public}
	if len(claims) > 0 {
		args = append(args, window)
		for i, c := range claims {
			names[i] = c.bucket
			args = append(args, c.n)
		}
		args = append(args, sum[:])
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
	if err == nil && !tokenMatches(sum, hash, revoked) {
		err = sql.ErrNoRows
	}
	if err != nil {
		// Units taken for a request that is not admitted go back: a
		// public id alone must not spend a token's budget.
		f.leases.giveBack(taken, window)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return Caller{}, errTokenInvalid()
	}
	if err != nil {
		return Caller{}, fmt.Errorf("admit: %w", err)
	}
	if err := f.noteTokenUse(ctx, id, lastUsed); err != nil {
		return Caller{}, err
	}
	counted := map[string]sql.NullInt64{bucketRequests: requests, bucketPosts: posts}
	counts := map[string]int{}
	for _, c := range claims {
		counts[c.bucket] = f.leases.granted(c.key, window, c.limit, c.n, int(counted[c.bucket].Int64))
	}
	if err := f.overLimit(ctx, tokenMeter(id), buckets, counts, now); err != nil {
		return Caller{}, err
	}
	rights, _ := ParseRights(rts)
	return Caller{Identity: identity, Kind: AuthorKind(kind), Rights: rights, Label: label, TokenID: id,
		Owner: ownerOf(identity, kind, owner),
		due:   dueProbe{known: true, next: nextDue}, wroteAt: wroteAt.String}, nil
}

// leaseClaim is a bucket the admission's statement counts: n units
// claimed for this request and the token's next ones (rate_leases.go).
type leaseClaim struct {
	bucketLimit
	key leaseKey
	n   int
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
			values[i] = "('" + b + "', ?::int)"
		}
		counted = `INSERT INTO rate_windows (token_id, bucket, window_start, count)
			SELECT tok.id, b.bucket, ?::bigint, b.n
			FROM tok, (VALUES ` + strings.Join(values, ", ") + `) AS b(bucket, n)
			WHERE tok.secret_hash = ? AND tok.revoked_at IS NULL
			ON CONFLICT (token_id, bucket, window_start) DO UPDATE SET count = rate_windows.count + excluded.count
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
