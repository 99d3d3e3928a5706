package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"parley/internal/cli"
	"parley/migrations/dbtest"
	"parley/services"
)

// TestBareHandlerAnswersAsParley: the bare handler docs/performance.md compares
// Parley with reads a thread into the same JSON, byte for byte, as
// read_thread, and posts a note that Parley then reads back as its own,
// with the thread counted and moved on.
func TestBareHandlerAnswersAsParley(t *testing.T) {
	ctx := context.Background()
	w := newBareWorld(t, ctx)
	forum, tok, who, pool := w.forum, w.tok, w.who, w.pool
	root, err := forum.Post(ctx, who, []byte(`{"kind":"ask","body":"Which option?"}`))
	if err != nil {
		t.Fatal(err)
	}
	th := root.Thread.ID
	bobTok, err := forum.CreateToken(ctx, services.TokenRequest{Handle: "bob", Rights: []services.Right{services.RightRead, services.RightWrite}})
	if err != nil {
		t.Fatal(err)
	}
	bob, err := forum.Authenticate(ctx, bobTok.Secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{`{"kind":"note","thread":"` + th + `","body":"one","from":{"extension":"w1"}}`,
		`{"kind":"answer","thread":"` + th + `","parent":"` + root.Message.ID + `","body":"two"}`} {
		if _, err := forum.Post(ctx, bob, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	app := newBare(pool).app()
	call := func(method, path, body string) (int, []byte) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok.Secret)
		req.Header.Set("Content-Type", "application/json")
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw
	}
	parley := func() []byte {
		view, err := forum.ReadThread(ctx, who, services.ThreadQuery{Thread: th})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(view)
		return raw
	}

	if status, got := call("GET", "/api/v1/threads/"+th, ""); status != 200 || !bytes.Equal(got, parley()) {
		t.Fatalf("bare read: %d\n%s\nwant\n%s", status, got, parley())
	}
	status, raw := call("POST", "/api/v1/messages", `{"kind":"note","thread":"`+th+`","body":"three","from":{"extension":"w2"}}`)
	if status != 201 {
		t.Fatalf("bare post: %d %s", status, raw)
	}
	var posted services.Posted
	if err := json.Unmarshal(raw, &posted); err != nil || posted.Message.Body != "three" || posted.Thread.MessageCount != 4 {
		t.Fatalf("bare post answered %s (%v)", raw, err)
	}
	if _, got := call("GET", "/api/v1/threads/"+th, ""); !bytes.Equal(got, parley()) || !strings.Contains(string(got), `"body":"three"`) {
		t.Fatalf("after the bare post, bare and Parley read differently:\n%s\n%s", got, parley())
	}
	if status, _ := call("GET", "/api/v1/threads/"+th+"?x", ""); status != 200 {
		t.Fatalf("bare read: %d", status)
	}
	req := httptest.NewRequest("GET", "/api/v1/threads/"+th, nil)
	req.Header.Set("Authorization", "Bearer prl_nobody_nothing")
	if resp, err := app.Test(req, -1); err != nil || resp.StatusCode != 401 {
		t.Fatalf("a wrong token: %v %v", resp, err)
	}
}

// bareWorld is a fresh forum on PostgreSQL with one agent, ada, and a pool
// for a bare handler on the same database; all closed when the test ends.
type bareWorld struct {
	url   string
	forum *services.Forum
	tok   services.CreatedToken
	who   services.Caller
	pool  *pgxpool.Pool
}

func newBareWorld(t *testing.T, ctx context.Context) bareWorld {
	t.Helper()
	dbtest.PostgresURL(t) // skips without PostgreSQL: the bare handler is pgx only
	w := bareWorld{url: dbtest.FreshURL(t, "postgres")}
	forum, closeDB, err := cli.Config{DB: w.url, Realm: "ainotes"}.Forum(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeDB() })
	w.forum = forum
	if w.tok, err = forum.CreateToken(ctx, services.TokenRequest{Handle: "ada", Rights: []services.Right{services.RightRead, services.RightWrite}}); err != nil {
		t.Fatal(err)
	}
	if w.who, err = forum.Authenticate(ctx, w.tok.Secret); err != nil {
		t.Fatal(err)
	}
	if w.pool, err = pgxpool.New(ctx, w.url); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.pool.Close)
	return w
}
