package mcp

import (
	"context"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// ProgressInterval is how often a waiting tool call tells its client that
// it is still waiting. docs/protocol.md §13 (errata 2) asks for at least every
// 10 s, so that a client which resets its timeout on progress (Claude
// Desktop, Claude Code, the TypeScript SDK's resetTimeoutOnProgress) never
// drops a call that waits up to wait_max_seconds; half that leaves room for
// a slow network.
const ProgressInterval = 5 * time.Second

// progressEvery is ProgressInterval; tests shorten it.
var progressEvery = ProgressInterval

// keepWaitingAlive sends notifications/progress for a call that may wait
// (inbox, get_events), every progressEvery until stop is called, when the
// client asked for progress (params._meta.progressToken). The wait itself is
// the services' business; telling the client it goes on is the transport's.
// A call that answers before the first tick sends nothing, so a call without
// wait never sends any. stop returns once no notification can follow, so
// none is queued after the answer.
//
// Over stdio the notifications are lines on stdout; over Streamable HTTP
// the first one turns the POST's answer into an SSE stream (see recorder in
// http.go), the answer coming last on it.
func keepWaitingAlive(ctx context.Context, req mcpgo.CallToolRequest, message string) (stop func()) {
	srv := mcpserver.ServerFromContext(ctx)
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil || srv == nil {
		return func() {}
	}
	token := req.Params.Meta.ProgressToken
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				// Progress counts the ticks: it must increase, and a wait
				// has no total worth announcing (it ends at the first turn).
				srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
					"progressToken": token,
					"progress":      n,
					"message":       message,
				})
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}
