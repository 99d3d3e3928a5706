package services

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"

	"parley/models"
)

// Sealing the search index's buckets (PostgreSQL; migration 0020).
//
// A search for words absent from the newest messages looks for them in
// older buckets, newest first (searchCandidatesSQL), and each look walks
// the bucket's 16,384 entries in the GIN index whether or not the words
// are there: 36 empty looks cost a search for a word found only in the
// oldest million of 1.6 M messages 30 ms. Once a bucket is full and every
// message of it has committed, its words are filed once in search_buckets,
// and a search looks only in the buckets whose words hold all of its own,
// and in those not yet sealed.
//
// A bucket is sealed only when no message can still join it. Its ids are
// taken from messages_id_seq, which hands them out in order: once a
// message with an id past the bucket's end has committed (full_at), every
// id of the bucket has been taken. A writer takes its transaction id in
// the statement that takes the message's id, or before (the position of
// a post is its transaction id, store_positions.go; an insert that takes
// its id from the sequence writes in the same statement), and a statement
// ends within statement_timeout (5 s, models.sessionSettings): so
// sealSettle after full_at, every writer of the bucket has a transaction
// id below the transaction ids then to come (horizon). When the oldest
// transaction still running is at or past the horizon, each of them has
// committed or rolled back, and the bucket's messages are read in the
// same statement that files their words (under the same snapshot).
//
// Several servers may seal one database: each step is a conditional
// statement that changes nothing the second time, and a bucket's words
// are read by one server at a time (an advisory lock).

// sealSettle is how long after a bucket is seen full its horizon is
// taken: longer than any statement may run (statement_timeout, 5 s).
const sealSettle = 10 * time.Second

// sealBatch bounds how many buckets one pass files: each is read in a
// statement of its own (about 16,384 messages, well within the statement
// timeout), and a forum upgraded with a million messages is sealed over
// a few passes rather than in one long one.
const sealBatch = 16

// SealSearchBuckets files the words of every bucket of the search index
// that has become full and whose writers have all ended (see above). It
// reports whether a bucket still waits to be sealed (the caller should
// look again in a few seconds), and a channel closed at the next write
// of any process, which may fill another bucket. On SQLite it does
// nothing: FTS5 needs no buckets.
func (f *Forum) SealSearchBuckets(ctx context.Context) (pending bool, news <-chan struct{}, err error) {
	news = f.hub.wait()
	pending, err = f.sealSearchBuckets(ctx, sealSettle)
	return pending, news, err
}

var (
	// sealArm marks every bucket below the newest message's as full
	// (">>" binds less tightly than "-": hence the parentheses).
	sealArm = `INSERT INTO search_buckets (bucket, full_at)
		SELECT b, now() FROM generate_series(
			(SELECT COALESCE(MAX(bucket) + 1, 0) FROM search_buckets),
			((SELECT COALESCE(MAX(id), 0) FROM messages) >> ` + strconv.Itoa(searchBucketShift) + `) - 1) b
		ON CONFLICT (bucket) DO NOTHING`
	// sealHorizon takes the horizon of the buckets full for settle.
	sealHorizon = `UPDATE search_buckets SET horizon = pg_snapshot_xmax(pg_current_snapshot())
		WHERE horizon IS NULL AND full_at <= now() - make_interval(secs => ?)`
	// sealReady lists the buckets whose writers have all ended.
	sealReady = `SELECT bucket FROM search_buckets
		WHERE words IS NULL AND horizon <= pg_snapshot_xmin(pg_current_snapshot())
		ORDER BY bucket LIMIT ?`
	// sealWords files a bucket's words, unless another server has or is
	// filing them. The horizon is checked again under the statement's own
	// snapshot, the one that reads the messages.
	sealWords = `UPDATE search_buckets s SET words = (
			SELECT COALESCE(array_to_tsvector(array_agg(DISTINCT w)), ''::tsvector)
			FROM messages m, unnest(tsvector_to_array(m.search)) w
			WHERE m.id >= s.bucket::bigint << ` + strconv.Itoa(searchBucketShift) + `
			  AND m.id < (s.bucket::bigint + 1) << ` + strconv.Itoa(searchBucketShift) + `)
		WHERE s.bucket = ? AND s.words IS NULL AND s.horizon <= pg_snapshot_xmin(pg_current_snapshot())
		  AND pg_try_advisory_xact_lock('search_buckets'::regclass::oid::int, s.bucket)`
	// sealPending tells whether a bucket is still to be sealed.
	sealPending = `SELECT EXISTS (SELECT 1 FROM search_buckets WHERE words IS NULL)`
)

// sealSearchBuckets is one pass of SealSearchBuckets, with the time
// between a bucket's full_at and its horizon as given (tests: 0).
func (f *Forum) sealSearchBuckets(ctx context.Context, settle time.Duration) (bool, error) {
	if !models.IsPostgresDB(f.db) {
		return false, nil
	}
	db := f.db.WithContext(ctx)
	if err := db.Exec(sealArm).Error; err != nil {
		return false, fmt.Errorf("seal search buckets: %w", err)
	}
	if err := db.Exec(sealHorizon, settle.Seconds()).Error; err != nil {
		return false, fmt.Errorf("seal search buckets: horizon: %w", err)
	}
	var ready []int32
	if err := db.Raw(sealReady, sealBatch).Scan(&ready).Error; err != nil {
		return false, fmt.Errorf("seal search buckets: %w", err)
	}
	for _, b := range ready {
		// One transaction per bucket: the advisory lock lasts as long.
		err := db.Transaction(func(tx *gorm.DB) error { return tx.Exec(sealWords, b).Error })
		if err != nil {
			return false, fmt.Errorf("seal search bucket %d: %w", b, err)
		}
	}
	var pending bool
	if err := db.Raw(sealPending).Scan(&pending).Error; err != nil {
		return false, fmt.Errorf("seal search buckets: %w", err)
	}
	return pending, nil
}
