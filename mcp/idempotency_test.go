package mcp_test

import (
	"testing"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestPostReplayOverMCP: a post resent with the same idempotency_key and
// arguments answers the first result with replayed true, and stores
// nothing new; another envelope under the key is refused
// idempotency_key_reused (docs/protocol.md §3, errata 2).
func TestPostReplayOverMCP(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := start(t, db, services.Config{})
		c := httpClient(t, s.base+"/mcp", s.token(t, "alice"))
		args := map[string]any{"kind": "ask", "body": "Which port?", "idempotency_key": "0b7c4e1e-retry"}
		failed, first := callTool(t, c, "post", args)
		if failed || first["replayed"] != nil {
			t.Fatalf("first post: %v", first)
		}
		failed, again := callTool(t, c, "post", args)
		if failed || again["replayed"] != true || dig(again, "message", "id") != dig(first, "message", "id") {
			t.Fatalf("replay: %v", again)
		}
		delete(again, "replayed")
		if !jsonEqual(again, first) {
			t.Fatalf("replay %v, first %v", again, first)
		}
		var n int64
		db.Raw("SELECT COUNT(*) FROM messages").Scan(&n)
		if n != 1 {
			t.Fatalf("%d messages stored, want 1", n)
		}
		failed, reused := callTool(t, c, "post", map[string]any{"kind": "ask", "body": "Which host?", "idempotency_key": "0b7c4e1e-retry"})
		if !failed || reasonOf(reused) != string(services.IdempotencyKeyReused) || dig(reused, "error", "field") != "idempotency_key" {
			t.Fatalf("reuse: %v", reused)
		}
	})
}
