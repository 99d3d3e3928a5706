package web_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

func TestEveryOperationOverHTTP(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		alice, bob := a.token("alice"), a.token("bob")
		mod := a.token("mod", services.RightRead, services.RightWrite, services.RightLock)

		for _, path := range []string{"/api/v1/manifest", "/.well-known/parley.json"} {
			m := a.ok(200, "GET", path, "", nil)
			if m.str("parley") != "1" || m.str("realm") != "ainotes" || len(m.get("operations").([]any)) != len(services.Operations) {
				t.Fatalf("%s: %s", path, m.raw[:200])
			}
		}
		me := a.ok(200, "GET", "/api/v1/me", mod, nil)
		if me.str("identity") != "ainotes:mod" || me.str("badge") != "KI · mod" || me.str("author_kind") != "llm" {
			t.Fatalf("me %s", me.raw)
		}

		ask := a.post(alice, map[string]any{"kind": "ask", "body": "Which port?"})
		th, root := ask.str("thread", "id"), ask.str("message", "id")
		if !strings.HasPrefix(th, "th_") || !strings.HasPrefix(root, "msg_") || ask.str("message", "from", "identity") != "ainotes:alice" {
			t.Fatalf("post %s", ask.raw)
		}
		num := strings.TrimPrefix(th, "th_")
		// thread and parent in both forms.
		a.post(bob, map[string]any{"kind": "answer", "thread": num, "parent": strings.TrimPrefix(root, "msg_"), "body": "8080"})
		a.post(bob, map[string]any{"kind": "note", "thread": th, "parent": root, "body": "or 8443"})

		for _, ref := range []string{th, num} {
			v := a.ok(200, "GET", "/api/v1/threads/"+ref, bob, nil)
			if v.str("thread", "id") != th || v.str("messages", 0, "id") != root || len(v.get("messages", 0, "replies").([]any)) != 2 {
				t.Fatalf("read_thread %s: %s", ref, v.raw)
			}
		}
		part := a.ok(200, "GET", "/api/v1/threads/"+th+"?limit=1", bob, nil)
		if part.str("messages", 0, "id") != root || len(part.get("messages", 0, "replies").([]any)) != 0 || part.get("more") != true {
			t.Fatalf("read_thread limit=1: %s", part.raw)
		}
		rest := a.ok(200, "GET", "/api/v1/threads/"+th+"?since="+part.str("cursor"), bob, nil)
		if len(rest.get("messages").([]any)) != 2 || rest.get("more") != false {
			t.Fatalf("read_thread since: %s", rest.raw)
		}
		dir := a.ok(200, "GET", "/api/v1/identities", bob, nil)
		if dir.str("identities", 0, "identity") != "ainotes:alice" || dir.get("identities", 0, "last_active_at") == nil || dir.get("cursor") != nil {
			t.Fatalf("list_identities %s", dir.raw)
		}
		if me := a.ok(200, "GET", "/api/v1/me?extension=w1", alice, nil); me.get("inbox", "count") != float64(1) || me.str("manifest", "digest") == "" {
			t.Fatalf("whoami's inbox count and manifest digest: %s", me.raw)
		}
		list := a.ok(200, "GET", "/api/v1/threads?state=answered&limit=10", bob, nil)
		if list.str("threads", 0, "id") != th || list.get("cursor") != nil {
			t.Fatalf("list %s", list.raw)
		}
		in := a.ok(200, "GET", "/api/v1/inbox", alice, nil)
		if in.str("items", 0, "thread", "id") != th || in.str("items", 0, "message", "kind") != "answer" || in.str("cursor") == "" {
			t.Fatalf("inbox %s", in.raw)
		}
		again := a.ok(200, "GET", "/api/v1/inbox?since="+in.str("cursor"), alice, nil)
		if len(again.get("items").([]any)) != 0 {
			t.Fatalf("inbox since %s", again.raw)
		}
		ev := a.ok(200, "GET", "/api/v1/events?thread="+th, bob, nil)
		if ev.str("events", 1, "to_state") != "answered" || ev.get("events", 1, "confirmed_at") != nil {
			t.Fatalf("events %s", ev.raw)
		}
		c := a.ok(200, "POST", "/api/v1/threads/"+th+"/confirm", mod, map[string]any{"state": "answered"})
		if c.get("thread", "confirmed") != true {
			t.Fatalf("confirm %s", c.raw)
		}
		if doc := a.ok(200, "GET", "/api/v1/openapi.json", "", nil); doc.str("openapi") != "3.1.0" {
			t.Fatalf("openapi %s", doc.raw[:100])
		}
		a.ok(200, "GET", "/healthz", "", nil)
		a.ok(200, "GET", "/readyz", "", nil)

		logs := a.logs.String()
		for _, secret := range []string{alice, bob, mod} {
			if strings.Contains(logs, secret) {
				t.Fatal("a token reached the request log")
			}
		}
		if !strings.Contains(logs, `"identity":"ainotes:mod"`) || !strings.Contains(logs, `"route":"/api/v1/threads/:thread/confirm"`) {
			t.Fatalf("request log lacks identity or route: %s", logs[:300])
		}
	})
}

// TestRefusalsOverHTTP reaches every reason a client can meet over HTTP.
func TestRefusalsOverHTTP(t *testing.T) {
	limits := services.DefaultLimits()
	limits.ThreadMaxMessages, limits.GuardChainMax = 5, 2
	eachServer(t, services.Config{Limits: limits}, func(t *testing.T, a *api) {
		alice, bob := a.token("alice"), a.token("bob")
		reader := a.token("reader", services.RightRead)
		ada := a.humanToken("ada")
		revoked := a.token("gone")
		list, _ := a.forum.ListTokens(t.Context())
		a.forum.RevokeToken(t.Context(), list[0].ID)

		th := a.post(alice, map[string]any{"kind": "ask", "body": "q"}).str("thread", "id")
		other := a.post(alice, map[string]any{"kind": "ask", "body": "other"})
		msgs := "/api/v1/messages"

		a.refused(services.TokenMissing, "GET", "/api/v1/inbox", "", nil)
		a.refused(services.TokenInvalid, "GET", "/api/v1/inbox", "prl_0000_0000", nil)
		a.refused(services.TokenInvalid, "GET", "/api/v1/me", revoked, nil)
		a.refused(services.TokenRightMissing, "POST", msgs, reader, map[string]any{"kind": "note", "thread": th, "body": "x"})
		a.refused(services.TokenRightMissing, "POST", "/api/v1/threads/"+th+"/confirm", bob, map[string]any{"state": "open"})
		a.refused(services.InvalidBody, "POST", msgs, bob, `{"kind": "note",`)
		r := a.refused(services.InvalidBody, "POST", msgs, bob, map[string]any{"kind": "note", "thread": th, "body": "x", "colour": "red"})
		if r.field() != "colour" {
			t.Fatalf("unknown field not named: %s", r.raw)
		}
		r = a.refused(services.InvalidBody, "POST", msgs, bob, map[string]any{"kind": "note", "thread": th, "body": strings.Repeat("x", 16384)})
		if !strings.Contains(r.str("error", "message"), "16384") {
			t.Fatalf("oversized body: %s", r.raw)
		}
		a.refused(services.InvalidBody, "GET", "/api/v1/inbox?since=bogus", bob, nil)
		a.refused(services.InvalidBody, "GET", "/api/v1/nowhere", bob, nil)
		a.refused(services.ThreadNotFound, "GET", "/api/v1/threads/th_999", bob, nil)
		a.refused(services.MessageNotFound, "POST", msgs, bob, map[string]any{"kind": "answer", "thread": th, "parent": "msg_999", "body": "x"})
		a.refused(services.IdentityNotFound, "POST", msgs, bob, map[string]any{"kind": "ask", "to": map[string]any{"identity": "ainotes:ghost"}, "body": "x"})
		a.refused(services.ParentMismatch, "POST", msgs, bob, map[string]any{"kind": "answer", "thread": th, "parent": other.str("message", "id"), "body": "x"})
		a.refused(services.SelfReply, "POST", msgs, alice, map[string]any{"kind": "note", "thread": th, "body": "me again"})
		a.refused(services.ThreadAuthorityMissing, "POST", msgs, bob, map[string]any{"kind": "decide", "thread": th, "body": "mine now"})
		a.refused(services.TransitionInvalid, "POST", msgs, alice, map[string]any{"kind": "mark", "thread": th, "state": "closed", "body": "skip"})
		a.refused(services.StateChanged, "POST", "/api/v1/threads/"+th+"/confirm", ada, map[string]any{"state": "decided"})

		a.post(bob, map[string]any{"kind": "answer", "thread": th, "body": "again"})
		r = a.refused(services.DuplicateBody, "POST", msgs, bob, map[string]any{"kind": "answer", "thread": th, "body": " AGAIN"})
		if r.status != 409 || r.field() != "body" {
			t.Fatalf("duplicate body: %s", r.raw)
		}
		for i := range 3 {
			a.post(bob, map[string]any{"kind": "answer", "thread": th, "body": fmt.Sprint("again ", i)})
		}
		a.refused(services.LimitExceeded, "POST", msgs, bob, map[string]any{"kind": "note", "thread": th, "body": "sixth"})

		loop := a.post(alice, map[string]any{"kind": "ask", "body": "Tabs or spaces?"}).str("thread", "id")
		tabs := a.post(bob, map[string]any{"kind": "note", "thread": loop, "body": "Tabs."}).str("message", "id")
		r = a.refused(services.LoopSuspected, "POST", msgs, alice, map[string]any{"kind": "note", "thread": loop, "parent": tabs, "body": "Spaces."})
		if r.status != 409 || r.field() != "parent" {
			t.Fatalf("runaway chain: %s", r.raw)
		}

		locked := a.post(alice, map[string]any{"kind": "ask", "body": "to lock"}).str("thread", "id")
		a.post(ada, map[string]any{"kind": "mark", "thread": locked, "state": "closed", "body": "closed"})
		a.refused(services.ThreadLocked, "POST", msgs, ada, map[string]any{"kind": "note", "thread": locked, "body": "x"})
		ended := a.post(alice, map[string]any{"kind": "ask", "body": "to end"}).str("thread", "id")
		a.post(ada, map[string]any{"kind": "mark", "thread": ended, "state": "obsolete", "body": "obsolete"})
		a.refused(services.ThreadEnded, "POST", msgs, bob, map[string]any{"kind": "note", "thread": ended, "body": "x"})

		// An unexpected fault: 500 internal, a generic message, logged with the request id.
		// The thread's insert passes GORM's create callbacks, or, on
		// PostgreSQL, the row callbacks as it is queued for COMMIT's batch
		// (services/post_open_later.go).
		fire := func(tx *gorm.DB) { tx.AddError(errors.New("disk on fire: INSERT INTO threads")) }
		a.db.Callback().Create().Before("gorm:create").Register("test:fail", func(tx *gorm.DB) {
			if tx.Statement.Table == "threads" {
				fire(tx)
			}
		})
		a.db.Callback().Row().Before("gorm:row").Register("test:fail", func(tx *gorm.DB) {
			if strings.HasPrefix(tx.Statement.SQL.String(), "INSERT INTO threads ") {
				fire(tx)
			}
		})
		r = a.refused(services.Internal, "POST", msgs, bob, map[string]any{"kind": "ask", "body": "boom"})
		a.db.Callback().Create().Remove("test:fail")
		a.db.Callback().Row().Remove("test:fail")
		if strings.Contains(string(r.raw), "INSERT") || strings.Contains(string(r.raw), "disk") {
			t.Fatalf("internal detail leaked: %s", r.raw)
		}
		if id := r.header.Get("X-Request-Id"); id == "" || !strings.Contains(a.logs.String(), id) {
			t.Fatal("the fault was not logged with its request id")
		}
		sqlDB, _ := a.db.DB()
		sqlDB.Close()
		a.refused(services.Unavailable, "GET", "/readyz", "", nil)
		a.refused(services.Unavailable, "GET", "/api/v1/inbox", bob, nil)
	})
}

func TestRateLimitOverHTTP(t *testing.T) {
	limits := services.DefaultLimits()
	limits.PostsPerMinute, limits.RequestsPerMinute = 2, 4
	// The clock stands still, or a run across a minute's end would count
	// in two windows.
	now := func() time.Time { return time.Date(2026, 12, 7, 12, 0, 5, 0, time.UTC) }
	eachServer(t, services.Config{Limits: limits, Now: now}, func(t *testing.T, a *api) {
		bob := a.token("bob")
		a.post(bob, map[string]any{"kind": "ask", "body": "1"})
		a.post(bob, map[string]any{"kind": "ask", "body": "2"})
		r := a.refused(services.RateLimited, "POST", "/api/v1/messages", bob, map[string]any{"kind": "ask", "body": "3"})
		retry, _ := r.get("error", "retry_after").(float64)
		if r.status != 429 || retry < 1 || retry > 60 || r.header.Get("Retry-After") == "" {
			t.Fatalf("429 without retry_after/Retry-After: %s %v", r.raw, r.header)
		}
		a.ok(200, "GET", "/api/v1/me", bob, nil)
		a.refused(services.RateLimited, "GET", "/api/v1/me", bob, nil)
		// Another token is unaffected.
		a.ok(200, "GET", "/api/v1/me", a.token("carol"), nil)
	})
}

// TestRateLimitLeasesUnderLoad: eight tokens call at once, each on its
// own connections, whose header buffers the server reuses; each is
// admitted exactly its limit. On PostgreSQL a process leases units ahead,
// keyed by the token's public id (services/rate_leases.go): a key that
// were a view of a request's buffer would change under the map, and the
// tokens would claim new leases and be refused early.
func TestRateLimitLeasesUnderLoad(t *testing.T) {
	limits := services.DefaultLimits()
	limits.RequestsPerMinute = 128 // leases of 4
	clock := time.Date(2026, 12, 7, 12, 0, 5, 0, time.UTC)
	now := func() time.Time { return clock }
	eachServer(t, services.Config{Limits: limits, Now: now}, func(t *testing.T, a *api) {
		admitted := make([]int, 8)
		var wg sync.WaitGroup
		for i := range admitted {
			tok := a.token(fmt.Sprintf("agent%d", i))
			wg.Go(func() {
				for {
					r := a.do("GET", "/api/v1/me", tok, nil)
					if r.status != 200 {
						if r.reason() != string(services.RateLimited) {
							t.Errorf("agent%d: %d %s", i, r.status, r.raw)
						}
						return
					}
					admitted[i]++
				}
			})
		}
		wg.Wait()
		for i, n := range admitted {
			if n != limits.RequestsPerMinute {
				t.Errorf("agent%d was admitted %d requests in a window, want %d", i, n, limits.RequestsPerMinute)
			}
		}
	})
}

// TestRateLimitAcrossServers runs two servers on one database: the limit is
// the token's, not the process's.
func TestRateLimitAcrossServers(t *testing.T) {
	limits := services.DefaultLimits()
	limits.RequestsPerMinute = 6
	cfg := services.Config{Limits: limits, Now: func() time.Time { return time.Date(2026, 12, 7, 12, 0, 5, 0, time.UTC) }}
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		one, two := startServer(t, db, cfg), startServer(t, db, cfg)
		bob := one.token("bob")
		for i := range 6 {
			srv := []*api{one, two}[i%2]
			srv.ok(200, "GET", "/api/v1/me", bob, nil)
		}
		one.refused(services.RateLimited, "GET", "/api/v1/me", bob, nil)
		two.refused(services.RateLimited, "GET", "/api/v1/me", bob, nil)
	})
}
