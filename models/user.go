package models

import "time"

// User is a human account; its identity is "human:" + Name.
type User struct {
	ID           int64 `gorm:"primaryKey"`
	Name         string
	PasswordHash string    // bcrypt
	CreatedAt    time.Time `gorm:"autoCreateTime:false"` // set by services
}

// TableName pins the table name.
func (User) TableName() string { return "users" }
