package services

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"golang.org/x/sync/semaphore"
	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/models"
)

// TestTurnsAreServedInOrder: with every turn taken, the requests that wait
// get theirs in the order they came as turns are given back — where
// database/sql's pool hands a freed connection to any of its waiters.
func TestTurnsAreServedInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, ctx := &Forum{gate: &turns{sem: semaphore.NewWeighted(2)}}, context.Background()
		first, err := f.Turn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		second, err := f.Turn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var served []int
		for i := range 5 {
			go func() {
				release, err := f.Turn(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				served = append(served, i)
				mu.Unlock()
				release()
			}()
			synctest.Wait() // i waits for its turn before i+1 asks
		}
		if len(served) != 0 {
			t.Fatalf("%v served while every turn was taken", served)
		}
		// One turn given back: the five pass through it one after another.
		first()
		synctest.Wait()
		if !slices.Equal(served, []int{0, 1, 2, 3, 4}) {
			t.Fatalf("served in the order %v, want [0 1 2 3 4]", served)
		}
		second()
	})
}

// TestTurnsMatchThePool: on PostgreSQL a forum has as many turns as its
// pool has connections; on SQLite, and with an unbounded pool, none (every
// request goes on at once).
func TestTurnsMatchThePool(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		if err := models.SetPool(db, 3); err != nil {
			t.Fatal(err)
		}
		f := New(db, Config{})
		if !models.IsPostgresDB(db) {
			if f.gate != nil {
				t.Fatal("SQLite has turns")
			}
			return
		}
		if f.gate == nil || !f.gate.sem.TryAcquire(3) || f.gate.sem.TryAcquire(1) {
			t.Fatal("a pool of 3 connections does not have 3 turns")
		}
		sqlDB, _ := db.DB()
		sqlDB.SetMaxOpenConns(0)
		if New(db, Config{}).gate != nil {
			t.Fatal("an unbounded pool has turns")
		}
	})
}
