package models

// LogSequence is the single-row counter that gives every write its position
// in the log (events, turns, activity). See services.nextSeq for why it is a
// locked row rather than a database sequence.
type LogSequence struct {
	ID    int64 `gorm:"primaryKey"`
	Value int64
}

// TableName pins the table name.
func (LogSequence) TableName() string { return "log_sequence" }
