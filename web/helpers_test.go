package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"gorm.io/gorm"

	"parley/internal/testkit"
	"parley/migrations/dbtest"
	"parley/services"
	"parley/web"
)

// api is a running server, reached over real HTTP.
type api struct {
	t     *testing.T
	base  string
	forum *services.Forum
	db    *gorm.DB
	logs  *syncBuffer
	app   *fiber.App
}

// eachServer starts the real application on a random port once per
// database and runs fn against it.
func eachServer(t *testing.T, cfg services.Config, fn func(t *testing.T, a *api)) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) { fn(t, startServer(t, db, cfg)) })
}

func startServer(t *testing.T, db *gorm.DB, cfg services.Config) *api {
	t.Helper()
	return startServerWith(t, db, cfg, web.Options{})
}

// startServerWith starts the application with these options; the logger
// is always the test's, so a test can read what the server logged.
func startServerWith(t *testing.T, db *gorm.DB, cfg services.Config, opts web.Options) *api {
	t.Helper()
	forum := services.New(db, cfg)
	logs := &syncBuffer{}
	opts.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	app, err := web.New(forum, opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		app.ShutdownWithContext(ctx)
	})
	return &api{t: t, base: "http://" + ln.Addr().String(), forum: forum, db: db, logs: logs, app: app}
}

// token creates a token the way an operator does, and returns its secret.
func (a *api) token(handle string, rights ...services.Right) string {
	a.t.Helper()
	if len(rights) == 0 {
		rights = []services.Right{services.RightRead, services.RightWrite}
	}
	tok, err := a.forum.CreateToken(context.Background(), services.TokenRequest{Handle: handle, Rights: rights})
	if err != nil {
		a.t.Fatal(err)
	}
	return tok.Secret
}

func (a *api) humanToken(name string) string {
	a.t.Helper()
	if err := a.forum.AddUser(context.Background(), name, "correct horse battery"); err != nil {
		a.t.Fatal(err)
	}
	tok, err := a.forum.CreateToken(context.Background(), services.TokenRequest{Human: name})
	if err != nil {
		a.t.Fatal(err)
	}
	return tok.Secret
}

// reply is a decoded HTTP response.
type reply struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (r reply) reason() string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e["reason"].(string)
	return s
}

func (r reply) field() string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e["field"].(string)
	return s
}

// get walks a decoded body by keys and indexes: get("thread", "id").
func (r reply) get(path ...any) any { return dig(r.body, path...) }

func (r reply) str(path ...any) string {
	s, _ := r.get(path...).(string)
	return s
}

// dig follows keys (and list indexes) into decoded JSON (testkit.Dig).
var dig = testkit.Dig

func (a *api) do(method, path, token string, body any) reply {
	a.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := reply{status: resp.StatusCode, header: resp.Header, raw: raw}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			a.t.Fatalf("%s %s: invalid JSON %q: %v", method, path, raw, err)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			a.t.Fatalf("%s %s: Content-Type %q", method, path, ct)
		}
	}
	return out
}

// ok calls and requires a success status.
func (a *api) ok(status int, method, path, token string, body any) reply {
	a.t.Helper()
	r := a.do(method, path, token, body)
	if r.status != status {
		a.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, status, r.raw)
	}
	return r
}

// refused calls and requires a refusal with this reason; the HTTP status
// must equal the refusal's status.
func (a *api) refused(reason services.Reason, method, path, token string, body any) reply {
	a.t.Helper()
	r := a.do(method, path, token, body)
	if r.reason() != string(reason) {
		a.t.Fatalf("%s %s: got %d %s, want %s", method, path, r.status, r.raw, reason)
	}
	if status, _ := r.get("error", "status").(float64); int(status) != r.status {
		a.t.Fatalf("%s %s: HTTP status %d but error.status %v", method, path, r.status, status)
	}
	if msg := r.str("error", "message"); msg == "" {
		a.t.Fatalf("%s %s: refusal without message", method, path)
	}
	return r
}

func (a *api) post(token string, env map[string]any) reply {
	a.t.Helper()
	return a.ok(201, "POST", "/api/v1/messages", token, env)
}

// syncBuffer collects logs written from server goroutines.
type syncBuffer = testkit.SyncBuffer
