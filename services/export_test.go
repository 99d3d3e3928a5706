package services

import (
	"context"
	"sync"
	"time"
)

// passwordChecks counts the passwords checked, per password tried, so that
// a test can tell how many attempts of a burst reached bcrypt. The counting
// check is installed before any test runs, so nothing races on
// checkPassword.
var (
	passwordChecksMu sync.Mutex
	passwordChecks   = map[string]int{}
)

func init() {
	check := checkPassword
	checkPassword = func(hash, password []byte) error {
		passwordChecksMu.Lock()
		passwordChecks[string(password)]++
		passwordChecksMu.Unlock()
		return check(hash, password)
	}
}

// PasswordChecks is how many times this password has been checked.
func PasswordChecks(password string) int {
	passwordChecksMu.Lock()
	defer passwordChecksMu.Unlock()
	return passwordChecks[password]
}

// LogAdvanced is the backstop's look at the log (store_positions.go).
func (f *Forum) LogAdvanced(ctx context.Context, since int64) (int64, bool, error) {
	return f.logAdvanced(ctx, since)
}

// HorizonSQL and PositionsPerTx let the read-replica test compute the
// feed's horizon on a standby, where the feed never reads (replicas.go).
const (
	HorizonSQL     = horizonSQL
	PositionsPerTx = positionsPerTx
)

// PositionSQL selects the transaction's next log position (its one
// parameter is PositionsPerTx), for the tests that write a position by hand.
const PositionSQL = positionSQL

// FanoutStats is how many shared reads this process's waiting inboxes made
// once woken (inbox_fanout.go), and how many waiters they served.
func (f *Forum) FanoutStats() (rounds, served int64) {
	return f.fan.rounds.Load(), f.fan.served.Load()
}

// HubRegistrations counts the waiting calls' registrations with the hub
// so far.
func (f *Forum) HubRegistrations() int64 { return f.hub.registrations.Load() }

// WakeAll wakes every waiting call of this process as the backstop does,
// so that a test can write through another Forum first and then wake them.
func (f *Forum) WakeAll() { f.hub.advance(0) }

// SealSearchBucketsNow is SealSearchBuckets without the settling: for a
// forum nobody else writes to.
func (f *Forum) SealSearchBucketsNow(ctx context.Context) (bool, error) {
	return f.sealSearchBuckets(ctx, 0)
}

// OpeningWrites are the statements an ask opening a thread queues for
// COMMIT on PostgreSQL (post_open_later.go), and the reply's thread update
// that names its turn through the sequence.
func OpeningWrites() []string {
	return []string{threadInsert.postgres, rootInsert.postgres, rootInsertOwnerless.postgres,
		openEventInsert.postgres, openedThreadUpdate.postgres, threadUpdateTurnLater.postgres}
}

// SignInWaitFull is the retry wait of a sign-in counter of allowed
// attempts whose upsert found it full at room, having read cur failures
// in its window and prev in the one before, into its window.
func SignInWaitFull(allowed, cur, room, prev int, into time.Duration) time.Duration {
	return signInKey{allowed: allowed}.waitFull(cur, room, prev, into)
}
