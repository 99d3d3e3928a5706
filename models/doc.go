// Package models holds the GORM structs for Parley's tables, one file per
// aggregate, and Open, which connects to PostgreSQL or the embedded SQLite
// file. It holds no rules: every decision about what may be stored lives in
// package services.
//
// Absent values are stored as empty strings rather than NULL (an extension,
// an awaited identity, a message's state), so that the same equality
// comparisons work on both databases without NULL-safe operators. Only
// timestamps and optional foreign keys are nullable.
package models
