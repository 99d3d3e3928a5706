package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"parley/internal/testkit"
	"parley/services"
)

// sse is one Server-Sent Event read from a stream.
type sse struct {
	event, id string
	data      map[string]any
}

// openStream starts GET /api/v1/stream and sends its events on a channel.
func openStream(t *testing.T, a *api, token, lastID string) (<-chan sse, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", a.base+"/api/v1/stream", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan sse, 100)
	if resp.StatusCode != http.StatusOK {
		close(out)
		return out, resp
	}
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var cur sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				cur.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				cur.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data)
			case line == "" && cur.event != "":
				out <- cur
				cur = sse{}
			}
		}
	}()
	return out, resp
}

// next is the stream's next event. Its bound fires only on a hang.
func next(t *testing.T, events <-chan sse) sse {
	t.Helper()
	select {
	case e, ok := <-events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return e
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30 s")
	}
	return sse{}
}

// TestStream: the stream sends every event and the caller's turns as they
// come, in log order; resumed with Last-Event-ID it sends exactly what came
// after; a token has at most streams_per_token streams.
func TestStream(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		alice, bob := a.token("alice"), a.token("bob")
		events, resp := openStream(t, a, bob, "")
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q", ct)
		}
		th := a.post(alice, map[string]any{"kind": "ask", "to": map[string]any{"identity": "ainotes:bob"}, "body": "Which port?"}).str("thread", "id")
		opened := next(t, events)
		turn := next(t, events)
		if opened.event != "parley.event" || opened.data["to_state"] != "open" || turn.event != "parley.inbox" || dig(turn.data, "thread", "id") != th {
			t.Fatalf("after the ask: %+v, then %+v", opened, turn)
		}
		a.post(bob, map[string]any{"kind": "answer", "thread": th, "body": "8443."})
		answered := next(t, events)
		if answered.event != "parley.event" || answered.data["to_state"] != "answered" {
			t.Fatalf("after the answer: %+v", answered)
		}
		// Missed while away: a decide (an event) and a new ask for bob
		// (an event and a turn). Resuming after the answer's event sends
		// exactly those, in order.
		a.post(alice, map[string]any{"kind": "decide", "thread": th, "body": "8443 it is."})
		th2 := a.post(alice, map[string]any{"kind": "ask", "to": map[string]any{"identity": "ainotes:bob"}, "body": "And the host?"}).str("thread", "id")
		resumed, _ := openStream(t, a, bob, answered.id)
		want := []struct{ event, what string }{{"parley.event", "decided"}, {"parley.event", "open"}, {"parley.inbox", th2}}
		for _, w := range want {
			e := next(t, resumed)
			got, _ := e.data["to_state"].(string)
			if e.event == "parley.inbox" {
				got, _ = dig(e.data, "thread", "id").(string)
			}
			if e.event != w.event || got != w.what {
				t.Fatalf("resumed: %s %s, want %s %s", e.event, got, w.event, w.what)
			}
		}
		// Nothing more: what comes next is what is posted now.
		th3 := a.post(alice, map[string]any{"kind": "ask", "body": "And the port of the proxy?"}).str("thread", "id")
		if e := next(t, resumed); e.event != "parley.event" || e.data["thread"] != th3 {
			t.Fatalf("resumed stream sent more than was missed: %+v", e)
		}
		// Two streams are open; two more may, a fifth is refused. (A
		// stream answers once it is admitted, so each counts here.)
		for range 2 {
			openStream(t, a, bob, "")
		}
		if _, resp := openStream(t, a, bob, ""); resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("a fifth stream: %d", resp.StatusCode)
		}
	})
}

// TestStreamSlotsFollowTheirClients: a stream whose client went away stops
// counting against streams_per_token at once (docs/protocol.md §13, errata
// 2), however the connection was dropped (RST, FIN, close), and a refusal's
// retry_after is truthful; over raw sockets, on one server. The times to
// admission are logged, not asserted.
func TestStreamSlotsFollowTheirClients(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		bob := a.token("bob")
		addr := strings.TrimPrefix(a.base, "http://")
		limit := a.forum.Limits().StreamsPerToken
		open := testkit.StreamSlots(t, []string{addr}, bob, limit)
		// The probe that came with each refusal wrote to every stream:
		// none of them was taken for gone, and each still counts.
		var n int64
		a.db.Table("streams").Count(&n)
		if int(n) != limit || len(open) != limit {
			t.Fatalf("%d stream rows, %d streams open; want %d", n, len(open), limit)
		}
	})
}
