package services

import (
	"context"
	"testing"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
)

// TestLockBatchPlansOnlyTheParentGeneric: in a reply's lock batch the
// lock's statement sets a generic plan (lockWithPositionGeneric) and
// the parent's read ends it (parentAheadRowRestoring), so the statements
// after the batch are planned as the session says — whatever its mode —
// and the thread, the parent and the position are read as without the
// brackets.
func TestLockBatchPlansOnlyTheParentGeneric(t *testing.T) {
	db := dbtest.Fresh(t, "postgres")
	f, ctx := New(db, Config{}), context.Background()
	if err := f.SeedWith(ctx, SeedPlan{Threads: 1, PerThread: 3}); err != nil {
		t.Fatal(err)
	}
	var thread, root int64
	if err := db.Raw("SELECT id, root_message_id FROM threads").Row().Scan(&thread, &root); err != nil {
		t.Fatal(err)
	}
	for _, session := range []string{"auto", "force_custom_plan"} {
		for _, early := range []bool{false, true} {
			var mode string
			var ahead *parentAhead
			var pos int64
			ctx, s := withSink(ctx)
			err := f.transact(ctx, func(tx *gorm.DB) error {
				if err := tx.Exec("SET LOCAL plan_cache_mode = " + session).Error; err != nil {
					return err
				}
				s.early.wanted = early
				ahead = &parentAhead{thread: thread, identity: "ada", n: 5}
				s.ahead = ahead
				th, err := lockThreadBatched(tx, actionOf(tx), thread)
				if err != nil {
					return err
				}
				if th.ID != thread || th.RootMessageID != root {
					t.Errorf("the batch read thread %d (root %d), want %d (%d)", th.ID, th.RootMessageID, thread, root)
				}
				if early {
					pos = s.early.pos
				}
				return scanRow(fixed("SELECT current_setting('plan_cache_mode')").on(tx), &mode)
			})
			if err != nil {
				t.Fatal(session, early, err)
			}
			if mode != session {
				t.Errorf("session %s, early %v: after the lock's batch plan_cache_mode is %s", session, early, mode)
			}
			if !ahead.found || ahead.parent.ID != root {
				t.Errorf("session %s, early %v: the parent read was %v, id %d; want the root %d", session, early, ahead.found, ahead.parent.ID, root)
			}
			if early && pos <= 0 {
				t.Errorf("session %s: position %d taken with the lock", session, pos)
			}
		}
	}
}
