package main

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// deliver measures the feed (docs/protocol.md §13): each agent waits on its inbox
// (wait=30) at the second server (--url2, another process on the same
// database), while its neighbour posts an ask addressed to it at the first;
// the latency is from the post's answer to the waiting call's answer.
func (w *worker) deliver(ctx context.Context, other *agentClient) (time.Duration, error) {
	// Read the inbox to its end first: a wait from a cursor with turns
	// still after it (the bench's threads await anyone) answers at once.
	for {
		args := withCursor("since", w.cursor)
		args["limit"] = 200
		r, err := w.client.call(ctx, "inbox", args)
		out := r.body
		if err != nil {
			return 0, err
		}
		if c, _ := out["cursor"].(string); c != "" {
			w.cursor = c
		}
		if items, _ := out["items"].([]any); len(items) < 200 {
			break
		}
	}
	got := make(chan time.Time, 1)
	go func() {
		args := withCursor("since", w.cursor)
		args["wait"], args["limit"] = 30, 1
		r, err := w.waiter.call(ctx, "inbox", args)
		if err == nil {
			if c, _ := r.body["cursor"].(string); c != "" {
				w.cursor = c
			}
		}
		got <- time.Now()
	}()
	time.Sleep(20 * time.Millisecond) // the call is waiting
	r, err := other.call(ctx, "post", map[string]any{"kind": "ask",
		"to": map[string]any{"identity": w.agent.identity}, "body": fmt.Sprintf("For %s, %d: are you there?", w.agent.identity, w.seq)})
	status := r.status
	posted := time.Now()
	w.seq++
	if err != nil || status != http.StatusCreated {
		<-got
		return 0, fmt.Errorf("post: %d %v", status, err)
	}
	select {
	case at := <-got:
		return at.Sub(posted), nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}
