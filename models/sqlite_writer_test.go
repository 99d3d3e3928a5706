package models

import "testing"

// TestWrites: which statements outside a transaction queue at the gate.
func TestWrites(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want bool
	}{
		{"INSERT INTO messages (body) VALUES (?)", true},
		{"  update tokens SET last_used_at = ?", true},
		{"DELETE FROM streams WHERE id = ?", true},
		{"REPLACE INTO x VALUES (1)", true},
		{"CREATE TABLE x (id int)", true},
		{"WITH c AS (SELECT 1) INSERT INTO x SELECT * FROM c", true},
		{"WITH page AS (SELECT * FROM threads) SELECT * FROM page", false},
		{"SELECT * FROM threads", false},
		{"PRAGMA data_version", false},
		{"select sqlite_version()", false},
	} {
		if got := writes(c.sql); got != c.want {
			t.Errorf("writes(%q) = %v, want %v", c.sql, got, c.want)
		}
	}
}
