package services

import (
	"context"
	"errors"
	"testing"
	"time"

	"parley/migrations/dbtest"
)

// TestSettleAnswersWhatWasFinalWhenTheDeadlineStrikes: rows above the
// horizon make settle read again until the caller's deadline; a read
// again that the deadline cuts short (one that outlasted twice the last,
// as under a loaded machine) answers what the read before it found final,
// not an error. A first read that fails is an error.
func TestSettleAnswersWhatWasFinalWhenTheDeadlineStrikes(t *testing.T) {
	f := New(dbtest.Fresh(t, "postgres"), Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	reads := 0
	keep, err := f.settleWith(ctx, func(horizon *int64) ([]int64, error) {
		reads++
		if reads == 1 {
			*horizon = 10
			return []int64{5, 15}, nil // 15 is above the horizon: read again
		}
		<-ctx.Done() // the read again outlasts the deadline
		return nil, ctx.Err()
	})
	// (On a machine too loaded to read again within the deadline, settle
	// answers after one read, with the same rows: no clock decides it.)
	if err != nil || keep != 1 {
		t.Errorf("settle answered %d rows, %v, after %d reads; want the 1 row below the horizon, no error", keep, err, reads)
	}

	broken := errors.New("the first read failed")
	if _, err := f.settleWith(context.Background(), func(*int64) ([]int64, error) { return nil, broken }); !errors.Is(err, broken) {
		t.Errorf("a failed first read answered %v", err)
	}
}
