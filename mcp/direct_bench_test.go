package mcp

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"sync/atomic"
	"testing"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"parley/internal/testkit"
	"parley/migrations/dbtest"
	"parley/services"
)

// BenchmarkToolCall is a tool call through the gate as the web binding
// hands it over (Handle), served by the gate itself (direct.go) and by the
// MCP library alone, on each database: the difference is what the
// library's transport costs a call. whoami is the smallest call that
// reads the database (its admission); post is a note into a thread, as
// agents mostly send (a thread is opened every 90 notes, unmeasured but
// counted in cpu-ns/op, this process's CPU per call).
func BenchmarkToolCall(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		b.Run(dialect, func(b *testing.B) {
			if dialect == "postgres" && os.Getenv(dbtest.EnvURL) == "" {
				b.Skip("set " + dbtest.EnvURL)
			}
			limits := services.DefaultLimits()
			limits.PostsPerMinute, limits.RequestsPerMinute = 1<<30, 1<<30
			limits.GuardThreadRunMax = 1000
			forum := services.New(dbtest.Fresh(b, dialect), services.Config{Limits: limits})
			ctx := context.Background()
			rights := []services.Right{services.RightRead, services.RightWrite}
			tok, err := forum.CreateToken(ctx, services.TokenRequest{Handle: "bench", Rights: rights})
			if err != nil {
				b.Fatal(err)
			}
			opener, err := forum.CreateToken(ctx, services.TokenRequest{Handle: "opener", Rights: rights})
			if err != nil {
				b.Fatal(err)
			}
			who, err := forum.Authenticate(ctx, opener.Secret)
			if err != nil {
				b.Fatal(err)
			}
			thread := ""
			open := func(run string, i int) { // a thread of its own every 90 notes (the guard's run limit is 100)
				b.StopTimer()
				root, err := forum.Post(ctx, who, fmt.Appendf(nil, `{"kind":"ask","body":"Where do the notes go? %s %d"}`, run, i))
				if err != nil {
					b.Fatal(err)
				}
				thread = root.Thread.ID
				b.StartTimer()
			}
			logger := slog.New(slog.DiscardHandler)
			direct := newGate(forum, logger, New(forum, logger), nil)
			library := direct
			library.tools = nil
			for _, path := range []struct {
				name string
				g    gate
			}{{"direct", direct}, {"library", library}} {
				for _, call := range []string{"whoami", "post"} {
					b.Run(path.name+"/"+call, func(b *testing.B) {
						b.ReportAllocs()
						defer testkit.CPUPerOp(b)()
						notes := 0 // in this run's thread: a new one first, then every 90
						for b.Loop() {
							i := int(calls.Add(1))
							args := `{}`
							if call == "post" {
								if notes%90 == 0 {
									open(b.Name(), i)
								}
								notes++
								args = fmt.Sprintf(`{"kind":"note","thread":%q,"body":"note %s %d, of an ordinary length for a note"}`, thread, path.name, i)
							}
							w := &benchWriter{header: http.Header{}}
							path.g.Handle(w, &mcpserver.HTTPRequest{Method: "POST", URL: &url.URL{Host: "bench", Path: "/mcp"},
								Header:  http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + tok.Secret}},
								Body:    fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i, call, args),
								Context: ctx})
							if w.status != http.StatusOK || len(w.body) == 0 || bytes.Contains(w.body, []byte(`"isError":true`)) {
								b.Fatalf("%d %s", w.status, w.body)
							}
						}
					})
				}
			}
		})
	}
}

// calls numbers the benchmark's calls across its runs (-count), so that no
// note repeats an earlier one (the guard refuses a repeated body).
var calls atomic.Int64

// benchWriter keeps an answer, as the web binding's writer does.
type benchWriter struct {
	header http.Header
	status int
	body   []byte
}

func (w *benchWriter) Header() http.Header { return w.header }
func (w *benchWriter) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
}
func (w *benchWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.body = append(w.body, p...)
	return len(p), nil
}
func (w *benchWriter) Flush()          {}
func (w *benchWriter) CanStream() bool { return false }
