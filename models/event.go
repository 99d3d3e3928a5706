package models

import "time"

// Event is one entry of a thread's append-only state log. Only ConfirmedAt
// is ever updated, when the proposal the event recorded is confirmed.
type Event struct {
	ID             int64 `gorm:"primaryKey"`
	Seq            int64 // position in the log, in commit order
	ThreadID       int64
	Type           string // "state", "confirm", "withdraw" or "claim"
	FromState      string
	ToState        string
	Origin         string // "user" or "llm"
	Label          string
	ActorIdentity  string
	ActorExtension string
	MessageID      *int64
	At             time.Time
	ConfirmedAt    *time.Time
}

// TableName pins the table name.
func (Event) TableName() string { return "events" }
