package mcp

import (
	"context"
	"time"

	"parley/services"
)

// Observer hears of each tool call when it ends: its operation, how long
// it took, and its refusal (nil when it succeeded). The web server's
// metrics and request log are one (web/metrics.go); the tools know
// nothing of either.
type Observer func(op services.OpName, took time.Duration, refusal *services.Refusal)

type observerKey struct{}

// WithObserver makes the tool calls of a request made with ctx report to
// o.
func WithObserver(ctx context.Context, o Observer) context.Context {
	return context.WithValue(ctx, observerKey{}, o)
}

// observe reports a tool call to the request's observer, if any.
func observe(ctx context.Context, op services.OpName, start time.Time, err error) {
	o, _ := ctx.Value(observerKey{}).(Observer)
	if o == nil {
		return
	}
	var r *services.Refusal
	if err != nil {
		r, _ = services.AsRefusal(err)
	}
	o(op, time.Since(start), r)
}
