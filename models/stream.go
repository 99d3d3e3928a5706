package models

import "time"

// Stream is an open event stream; see migration 0006.
type Stream struct {
	ID       int64 `gorm:"primaryKey"`
	TokenID  int64
	OpenedAt time.Time
	SeenAt   time.Time
}

// TableName pins the table name.
func (Stream) TableName() string { return "streams" }
