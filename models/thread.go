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

	// The state of record (docs/protocol.md §5.2): the last confirmed state, which
	// a pending proposal (State with StateConfirmedAt nil) sits on top of.
	// With no proposal pending the State columns equal these. Record*
	// copy the state event that set it, so withdrawing a proposal restores
	// the State columns without reading the log; RecordConfirmedBy labels
	// whoever confirmed it (the setter itself for a confirmed mark).
	RecordState       string
	RecordOrigin      string
	RecordLabel       string
	RecordConfirmedAt *time.Time
	RecordConfirmedBy string
	RecordEventID     int64

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

	// The guard profile (docs/protocol.md §14). ModelRun counts consecutive model
	// messages since a human or a lock holder last acted; ReplyBy is the
	// open turn's deadline (its ask's reply_by, nil when it has none) and
	// EscalatedAt when that turn escalated.
	ModelRun    int
	ReplyBy     *time.Time
	EscalatedAt *time.Time

	CreatedByIdentity  string
	CreatedByExtension string
	MessageCount       int
	CreatedAt          time.Time `gorm:"autoCreateTime:false"` // set by services
	UpdatedAt          time.Time `gorm:"autoUpdateTime:false"` // set by services
}

// TableName pins the table name.
func (Thread) TableName() string { return "threads" }
