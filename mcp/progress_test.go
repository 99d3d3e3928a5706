package mcp_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"parley/mcp"
	"parley/migrations/dbtest"
	"parley/services"
)

// TestWaitingCallSendsProgress: an inbox call that waits and carries a
// progressToken gets notifications/progress with that token and an
// increasing progress while it waits (docs/protocol.md §13, errata 2), over
// Streamable HTTP and over stdio; the call still answers as soon as a turn
// opens. Nothing here depends on how
// long anything takes: bob's ask is posted once the first progress arrived.
func TestWaitingCallSendsProgress(t *testing.T) {
	mcp.ShortenProgress(t, 20*time.Millisecond)
	srv := start(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	bob := httpClient(t, srv.base+"/mcp", srv.token(t, "bob"))
	aliceToken := srv.token(t, "alice")

	for name, alice := range map[string]func(t *testing.T) *client.Client{
		"streamable http": func(t *testing.T) *client.Client {
			return httpClient(t, srv.base+"/mcp", aliceToken)
		},
		"stdio": func(t *testing.T) *client.Client {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			go mcp.ServeStdio(ctx, srv.forum, aliceToken, inR, outW, slog.New(slog.DiscardHandler))
			c := client.NewClient(transport.NewIO(outR, inW, io.NopCloser(&io.LimitedReader{})))
			initialize(t, c)
			return c
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := alice(t)
			progress := make(chan mcpgo.JSONRPCNotification, 1000)
			c.OnNotification(func(n mcpgo.JSONRPCNotification) {
				if n.Method == "notifications/progress" {
					progress <- n
				}
			})
			// Start from the present, so only bob's new ask ends the wait.
			_, first := callTool(t, c, "inbox", map[string]any{})
			answered := make(chan *mcpgo.CallToolResult, 1)
			go func() {
				req := mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: "inbox", Arguments: map[string]any{"since": first["cursor"], "wait": 30}}}
				req.Params.Meta = &mcpgo.Meta{ProgressToken: "wait-" + name}
				res, err := c.CallTool(context.Background(), req)
				if err != nil {
					t.Errorf("waiting inbox: %v", err)
				}
				answered <- res
			}()
			var last float64
			select {
			case n := <-progress:
				if tok := n.Params.AdditionalFields["progressToken"]; tok != "wait-"+name {
					t.Fatalf("progress for token %v: %+v", tok, n.Params.AdditionalFields)
				}
				last, _ = n.Params.AdditionalFields["progress"].(float64)
				if msg, _ := n.Params.AdditionalFields["message"].(string); msg == "" || last < 1 {
					t.Fatalf("progress %+v", n.Params.AdditionalFields)
				}
			case res := <-answered:
				t.Fatalf("the call answered before any progress: %+v", res)
			case <-time.After(time.Minute):
				t.Fatal("no progress and no answer")
			}
			callTool(t, bob, "post", map[string]any{"kind": "ask", "to": map[string]any{"identity": "ainotes:alice"}, "body": "Progress over " + name + "?"})
			var res *mcpgo.CallToolResult
			select {
			case res = <-answered:
			case <-time.After(time.Minute): // a bound against a hang, not a timing
				t.Fatal("the waiting call did not answer bob's ask")
			}
			if res == nil || res.IsError {
				t.Fatalf("waiting inbox answered %+v", res)
			}
			if items, _ := dig(res.StructuredContent, "items").([]any); len(items) != 1 {
				t.Fatalf("the wait ended without bob's ask: %+v", res.StructuredContent)
			}
			// Every progress delivered increases.
			for len(progress) > 0 {
				n := <-progress
				p, _ := n.Params.AdditionalFields["progress"].(float64)
				if p <= last {
					t.Fatalf("progress %v after %v", p, last)
				}
				last = p
			}
		})
	}
}
