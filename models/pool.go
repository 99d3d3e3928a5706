package models

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// DefaultMaxConns is the connection pool's size unless configured. Every
// connection stays open while idle, so a loaded server does not open a new
// PostgreSQL connection per request; 16 per server process stays well
// inside PostgreSQL's default max_connections of 100 with a few processes.
const DefaultMaxConns = 16

// SetPool sizes db's pool: at most maxConns connections, all of which may
// stay idle, each closed after an idle half hour and recycled after an
// hour. maxConns < 1 means DefaultMaxConns.
func SetPool(db *gorm.DB, maxConns int) error {
	if maxConns < 1 {
		maxConns = DefaultMaxConns
	}
	sqlDB, err := db.DB()
	if err != nil {
		return fmt.Errorf("pool: %w", err)
	}
	sqlDB.SetMaxOpenConns(maxConns)
	sqlDB.SetMaxIdleConns(maxConns)
	sqlDB.SetConnMaxIdleTime(30 * time.Minute)
	sqlDB.SetConnMaxLifetime(time.Hour)
	return nil
}
