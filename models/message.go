package models

import "time"

// Message is one stored envelope.
type Message struct {
	ID       int64 `gorm:"primaryKey"`
	ThreadID int64
	ParentID *int64
	Depth    int // the root is 1
	Kind     string

	AuthorIdentity  string
	AuthorExtension string
	AuthorKind      string // "llm" or "human"
	AuthorBadge     string // "KI · <label>" for lock holders, else ""
	AuthorOwner     string // the posting token's owner then, "human:<name>" or "" (§15.1)

	Body             string
	ProvenanceModel  string
	ProvenanceClient string
	ToIdentity       string
	ToExtension      string
	State            string // the state a mark names, else ""
	ClaimID          *int64 // the claim a profile act concerns (an assert's own)

	// The guard profile (docs/protocol.md §14). BodyHash is the SHA-256 of the
	// body case-folded and whitespace-collapsed; ChainLen counts the
	// unmarked model messages ending here, this one included (0 for a
	// human's or a lock holder's message or one carrying a mark); ReplyBy
	// is an ask's deadline.
	BodyHash string
	ChainLen int
	ReplyBy  *time.Time

	AwaitingIdentity  string
	AwaitingExtension string
	CreatedAt         time.Time `gorm:"autoCreateTime:false"` // set by services
}

// TableName pins the table name.
func (Message) TableName() string { return "messages" }
