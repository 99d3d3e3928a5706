package services

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/models"
)

// TestSlotReleasesGoInBatches: the slots of the many waiting calls one
// wake ends are released in DELETEs of at most releaseBatchMax rows, so
// that the first calls answer while the later ones' statements run; every
// slot is released, and a release returns only once its own row is gone.
func TestSlotReleasesGoInBatches(t *testing.T) {
	for _, kind := range []string{"postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			db := dbtest.Fresh(t, kind)
			f, ctx := New(db, Config{}), context.Background()
			if _, err := f.CreateToken(ctx, TokenRequest{Handle: "ada", Rights: []Right{RightRead}}); err != nil {
				t.Fatal(err)
			}
			var tokenID int64
			if err := db.Raw("SELECT id FROM tokens").Row().Scan(&tokenID); err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			slots := make([]models.Stream, 3*releaseBatchMax+10)
			for i := range slots {
				slots[i] = models.Stream{TokenID: tokenID, Kind: string(slotWait), OpenedAt: now, SeenAt: now}
			}
			if err := db.CreateInBatches(slots, 200).Error; err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var deleted []int64
			// SQLite deletes through GORM's Delete; PostgreSQL sends one
			// statement with the batch's ids as an array (seen by the raw
			// callbacks before it is queued for the commit's round trip).
			record := func(n int64) {
				mu.Lock()
				deleted = append(deleted, n)
				mu.Unlock()
			}
			err := db.Callback().Delete().After("gorm:delete").Register("test:deleted", func(tx *gorm.DB) {
				if tx.Statement.Table == "streams" {
					record(tx.RowsAffected)
				}
			})
			if err == nil {
				err = db.Callback().Raw().Before("gorm:raw").Register("test:deleted", func(tx *gorm.DB) {
					if !strings.HasPrefix(tx.Statement.SQL.String(), "DELETE FROM streams") {
						return
					}
					if ids, ok := tx.Statement.Vars[0].([]int64); ok {
						record(int64(len(ids)))
					} else {
						t.Errorf("the slots' DELETE took %T, not the ids", tx.Statement.Vars[0])
					}
				})
			}
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for _, s := range slots {
				wg.Go(func() {
					f.releaseWait(s.ID)
					var left int64
					if err := db.Model(&models.Stream{}).Where("id = ?", s.ID).Count(&left).Error; err != nil || left != 0 {
						t.Errorf("slot %d: %d rows left after its release (%v)", s.ID, left, err)
					}
				})
			}
			wg.Wait()
			var all int64
			for _, n := range deleted {
				all += n
				if n > releaseBatchMax {
					t.Errorf("one DELETE released %d slots, more than %d", n, releaseBatchMax)
				}
			}
			if all != int64(len(slots)) || len(deleted) < len(slots)/releaseBatchMax {
				t.Errorf("%d DELETEs released %d slots of %d", len(deleted), all, len(slots))
			}
			if kind != "postgres" {
				return
			}
			// Unobserved, a batch is one round trip: BEGIN, its settings, the
			// SET LOCAL, the DELETE and COMMIT in one pgx batch.
			db.Callback().Delete().Remove("test:deleted")
			db.Callback().Raw().Remove("test:deleted")
			more := make([]models.Stream, 3)
			for i := range more {
				more[i] = models.Stream{TokenID: tokenID, Kind: string(slotWait), OpenedAt: now, SeenAt: now}
			}
			if err := db.Create(&more).Error; err != nil {
				t.Fatal(err)
			}
			var trips atomic.Int64
			f.deleteSlots(models.CountRoundTrips(ctx, &trips), []int64{more[0].ID, more[1].ID, more[2].ID})
			var left int64
			if err := db.Model(&models.Stream{}).Count(&left).Error; err != nil || left != 0 {
				t.Fatalf("%d slots left (%v)", left, err)
			}
			if trips.Load() != 1 {
				t.Errorf("a batch of releases took %d round trips, want 1", trips.Load())
			}
		})
	}
}
