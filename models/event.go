package models

import "time"

// Event is one entry of a thread's append-only log of state changes and
// claim status changes. Only ConfirmedAt is ever updated, when the proposal
// the event recorded is confirmed. A "claim" event holds claim statuses in
// FromState and ToState; an "escalate" event records that an ask's
// reply_by passed while its turn was open (docs/protocol.md §14).
type Event struct {
	ID             int64 `gorm:"primaryKey"`
	Seq            int64 // position in the log, in commit order
	ThreadID       int64
	Type           string // "state", "confirm", "withdraw", "claim" or "escalate"
	FromState      string
	ToState        string
	Origin         string // "user" or "llm"
	Label          string
	ActorIdentity  string
	ActorExtension string
	MessageID      *int64
	ClaimID        *int64 // the claim whose status a "claim" event records
	At             time.Time
	ConfirmedAt    *time.Time
}

// TableName pins the table name.
func (Event) TableName() string { return "events" }
