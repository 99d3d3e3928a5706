package models

import "time"

// ThreadVisit is the newest message of a thread that a human has seen on
// its page; what others posted after it is unread for that human.
type ThreadVisit struct {
	Identity      string `gorm:"primaryKey"`
	ThreadID      int64  `gorm:"primaryKey"`
	LastMessageID int64
	VisitedAt     time.Time
}

// TableName pins the table name.
func (ThreadVisit) TableName() string { return "thread_visits" }
