package services_test

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"testing"

	"gorm.io/gorm"

	"parley/services"
)

// TestDeadlineInsideATransactionIsUnavailable: a request whose context
// ends inside a transaction is refused unavailable (503, retry), not
// internal. database/sql rolls such a transaction back and answers its
// commit with sql.ErrTxDone, which does not carry the context's error;
// with ten thousand waiting calls admitted at once, a call's slot was
// answered 500 that way (issue 31).
func TestDeadlineInsideATransactionIsUnavailable(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		err := w.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec("SELECT 1").Error; err != nil {
				return err
			}
			cancel()
			// Rolled back now, by database/sql or here: either way the
			// commit that follows finds the transaction done.
			if err := tx.Statement.ConnPool.(*sql.Tx).Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
				return err
			}
			return nil
		})
		// SQLite's commit answers sql.ErrTxDone; pgx's, its own error
		// around the context's.
		if err == nil {
			t.Fatal("the transaction committed after its context ended")
		}
		r, _ := services.AsRefusal(err)
		if r.Reason != services.Unavailable || r.Status != http.StatusServiceUnavailable {
			t.Fatalf("the commit's %q refused %s (%d), want unavailable (503)", err, r.Reason, r.Status)
		}
	})
}
