package web_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"parley/services"
)

// TestAddressedInboxOverHTTP: GET /api/v1/inbox?addressed=true finds
// alice's one addressed turn under 120 open asks to anyone, pages with its
// own cursor, refuses the full inbox's cursor (and the full inbox its
// cursor), and a waiting addressed read is answered by the next turn
// addressed to alice, not by an ask to anyone (docs/protocol.md §8, §13).
func TestAddressedInboxOverHTTP(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		alice, bob, carol := a.token("alice"), a.token("bob"), a.token("carol")
		ctx := context.Background()
		// The 120 asks go to the service directly: over HTTP they would
		// meet posts_per_minute.
		who, err := a.forum.Authenticate(ctx, bob)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 120 {
			if _, err := a.forum.Post(ctx, who, []byte(fmt.Sprintf(`{"kind":"ask","body":"Open question %d, for anyone?"}`, i))); err != nil {
				t.Fatal(err)
			}
		}
		first := a.ok(201, "POST", "/api/v1/messages", carol, map[string]any{"kind": "ask", "to": map[string]any{"identity": "ainotes:alice"}, "body": "Alice, is the key rotated?"})
		second := a.ok(201, "POST", "/api/v1/messages", bob, map[string]any{"kind": "ask", "to": map[string]any{"identity": "ainotes:alice"}, "body": "Alice, and the logs?"})

		full := a.ok(200, "GET", "/api/v1/inbox", alice, nil)
		if n := len(full.get("items").([]any)); n != 50 || strings.Contains(string(full.raw), first.str("thread", "id")+`"`) {
			t.Fatalf("the full inbox's first page holds %d items, alice's turn among them?", n)
		}
		p1 := a.ok(200, "GET", "/api/v1/inbox?addressed=true&limit=1", alice, nil)
		if items := p1.get("items").([]any); len(items) != 1 || p1.str("items", 0, "thread", "id") != first.str("thread", "id") || p1.str("items", 0, "message", "id") != first.str("message", "id") {
			t.Fatalf("addressed page 1: %s", p1.raw)
		}
		p2 := a.ok(200, "GET", "/api/v1/inbox?addressed=true&limit=1&since="+url.QueryEscape(p1.str("cursor")), alice, nil)
		if items := p2.get("items").([]any); len(items) != 1 || p2.str("items", 0, "thread", "id") != second.str("thread", "id") {
			t.Fatalf("addressed page 2: %s", p2.raw)
		}
		p3 := a.ok(200, "GET", "/api/v1/inbox?addressed=true&since="+url.QueryEscape(p2.str("cursor")), alice, nil)
		if len(p3.get("items").([]any)) != 0 || p3.str("cursor") != p2.str("cursor") {
			t.Fatalf("addressed page 3: %s", p3.raw)
		}

		r := a.refused(services.InvalidBody, "GET", "/api/v1/inbox?since="+url.QueryEscape(p1.str("cursor")), alice, nil)
		if r.field() != "since" || !strings.Contains(r.str("error", "message"), "addressed") {
			t.Fatalf("the full inbox given an addressed cursor: %s", r.raw)
		}
		r = a.refused(services.InvalidBody, "GET", "/api/v1/inbox?addressed=true&since="+url.QueryEscape(full.str("cursor")), alice, nil)
		if r.field() != "since" || !strings.Contains(r.str("error", "message"), "full inbox") {
			t.Fatalf("the addressed inbox given a full cursor: %s", r.raw)
		}
		if r = a.refused(services.InvalidBody, "GET", "/api/v1/inbox?addressed=yes", alice, nil); r.field() != "addressed" {
			t.Fatalf("addressed=yes: %s", r.raw)
		}

		// A waiting addressed read: an ask to anyone does not answer it, the
		// next ask to alice does.
		got := make(chan reply, 1)
		go func() {
			got <- a.do("GET", "/api/v1/inbox?addressed=true&wait=20&since="+url.QueryEscape(p3.str("cursor")), alice, nil)
		}()
		time.Sleep(100 * time.Millisecond) // let it wait
		a.ok(201, "POST", "/api/v1/messages", carol, map[string]any{"kind": "ask", "body": "Anyone at all?"})
		select {
		case w := <-got:
			t.Fatalf("an ask to anyone answered alice's waiting addressed inbox: %s", w.raw)
		case <-time.After(300 * time.Millisecond):
		}
		third := a.ok(201, "POST", "/api/v1/messages", carol, map[string]any{"kind": "ask", "to": map[string]any{"identity": "ainotes:alice"}, "body": "Alice, now?"})
		select {
		case w := <-got:
			if w.status != 200 || len(w.get("items").([]any)) != 1 || w.str("items", 0, "message", "id") != third.str("message", "id") {
				t.Fatalf("alice's waiting addressed inbox answered %d %s", w.status, w.raw)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("an ask to alice did not answer her waiting addressed inbox")
		}
	})
}
