package models

import "time"

// Stream is a long-lived call holding a slot: an event stream, a waiting
// read or a page's /live stream (Kind); see migrations 0006 and 0014.
type Stream struct {
	ID         int64 `gorm:"primaryKey"`
	TokenID    int64
	SessionKey int64
	Kind       string `gorm:"default:stream"`
	OpenedAt   time.Time
	SeenAt     time.Time
	EndsAt     *time.Time
}

// TableName pins the table name.
func (Stream) TableName() string { return "streams" }
