package models_test

import (
	"sync"
	"testing"

	"parley/migrations/dbtest"
	"parley/models"
)

// TestPoolKeepsItsConnections runs 64 concurrent queries through a pool of
// 8 on PostgreSQL: no query opens a connection beyond the pool, and none
// of them is closed for want of idle room, so a loaded server does not
// open a new PostgreSQL connection per request.
func TestPoolKeepsItsConnections(t *testing.T) {
	db, err := models.Open(dbtest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	defer sqlDB.Close()
	if err := models.SetPool(db, 8); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				var one int
				if err := db.Raw("SELECT 1 FROM pg_sleep(0.001)").Scan(&one).Error; err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st := sqlDB.Stats()
	if st.MaxOpenConnections != 8 || st.OpenConnections > 8 {
		t.Fatalf("pool grew past its size: %+v", st)
	}
	if st.MaxIdleClosed != 0 || st.Idle != st.OpenConnections {
		t.Fatalf("connections were closed instead of kept idle: %+v", st)
	}
	var timeout string
	db.Raw("SHOW statement_timeout").Scan(&timeout)
	if timeout != "5s" {
		t.Fatalf("statement_timeout %q, want the session default 5s", timeout)
	}
}
