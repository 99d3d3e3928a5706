package models

import "time"

// Thread is one conversation: its state, whose turn it is, and the counters
// that order it in listings and inboxes.
type Thread struct {
	ID            int64 `gorm:"primaryKey"`
	Title         string
	RootMessageID int64

	State            string
	StateOrigin      string // "user" or "llm"
	StateConfirmedAt *time.Time
	StateLabel       string
	StateEventID     int64 // the event that set the current state

	// AwaitingIdentity is "" (nobody), "*" (anyone) or an identity.
	AwaitingIdentity  string
	AwaitingExtension string
	// TurnMessageID is the message that opened the current turn, and
	// TurnSeq its position in the log; the inbox pages by TurnSeq.
	TurnMessageID int64
	TurnSeq       int64
	// ActivitySeq is the log position of the thread's last change;
	// list_threads pages by it, newest first.
	ActivitySeq int64

	CreatedByIdentity  string
	CreatedByExtension string
	MessageCount       int
	CreatedAt          time.Time `gorm:"autoCreateTime:false"` // set by services
	UpdatedAt          time.Time `gorm:"autoUpdateTime:false"` // set by services
}

// TableName pins the table name.
func (Thread) TableName() string { return "threads" }
