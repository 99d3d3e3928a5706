package mcp_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestWaitingToolCallsOverHTTP: over Streamable HTTP, a token holds at most
// waits_per_token waiting tool calls, the next is a rate_limited tool
// result with retry_after; a call whose client closes its connection frees
// its slot at once; and a waiting call whose token is revoked answers
// token_invalid within a heartbeat (issue 23, items 3 and 4). The waits
// last 120 s: a slot freed only at their end fails the 60 s bound.
func TestWaitingToolCallsOverHTTP(t *testing.T) {
	limits := services.DefaultLimits()
	limits.WaitMaxSeconds = 120
	db := dbtest.Fresh(t, "sqlite")
	srv := start(t, db, services.Config{Limits: limits, Heartbeat: 50 * time.Millisecond})
	bobToken := srv.token(t, "bob")
	bob := httpClient(t, srv.base+"/mcp", bobToken)
	_, first := callTool(t, bob, "get_events", map[string]any{})
	since := first["cursor"]
	waits := func() int {
		var n int64
		db.Table("streams").Where("kind = 'wait'").Count(&n)
		return int(n)
	}
	call := func(ctx context.Context, wait int) (*mcpgo.CallToolResult, error) {
		return bob.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: "get_events",
			Arguments: map[string]any{"since": since, "wait": wait}}})
	}
	reason := func(res *mcpgo.CallToolResult) (string, float64) {
		raw, _ := json.Marshal(res.StructuredContent)
		var body map[string]any
		json.Unmarshal(raw, &body)
		e, _ := body["error"].(map[string]any)
		s, _ := e["reason"].(string)
		n, _ := e["retry_after"].(float64)
		return s, n
	}
	limit := srv.forum.Limits().WaitsPerToken
	cancels := make([]context.CancelFunc, limit)
	for i := range limit {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		cancels[i] = cancel
		go call(ctx, 120)
	}
	deadline := time.Now().Add(30 * time.Second)
	for waits() < limit {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d waiting calls hold a slot after 30 s", waits(), limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	res, err := call(context.Background(), 120)
	if r, retry := reason(res); err != nil || !res.IsError || r != "rate_limited" || retry < 1 || retry > 120 {
		t.Fatalf("waiting call %d: %v %v %v", limit+1, err, r, retry)
	}
	// A client goes away: its slot is free at once.
	cancels[0]()
	start := time.Now()
	for tries := 1; ; tries++ {
		res, err := call(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError {
			t.Logf("a waiting MCP client closed its connection: a new wait admitted after %s (%d tries)", time.Since(start).Round(time.Millisecond), tries)
			break
		}
		if r, _ := reason(res); r != "rate_limited" || time.Since(start) > 60*time.Second {
			t.Fatalf("after a waiting client went away (%s): %s", time.Since(start), r)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range cancels {
		c()
	}
	for waits() > 0 {
		if time.Since(start) > 60*time.Second {
			t.Fatalf("%d waits still held 60 s after their clients left", waits())
		}
		time.Sleep(5 * time.Millisecond)
	}

	// The token is revoked while a call waits: the call ends token_invalid.
	answered := make(chan *mcpgo.CallToolResult, 1)
	go func() {
		res, _ := call(context.Background(), 120)
		answered <- res
	}()
	for waits() < 1 {
		time.Sleep(5 * time.Millisecond)
	}
	who, err := srv.forum.Authenticate(context.Background(), bobToken)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.forum.RevokeToken(context.Background(), who.TokenID); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-answered:
		if r, _ := reason(res); res == nil || !res.IsError || r != "token_invalid" {
			t.Fatalf("a waiting call after its token was revoked: %+v", res)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("a waiting call still waiting 60 s after its token was revoked")
	}
}
