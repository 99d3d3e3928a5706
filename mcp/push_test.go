package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"parley/mcp"
	"parley/migrations"
	"parley/migrations/dbtest"
	"parley/models"
	"parley/services"
)

// pushBound is how long a test waits for a pushed notification: generous,
// for a loaded machine; the feed delivers well within it.
const pushBound = 90 * time.Second

// buildParley builds the parley binary once for a test.
func buildParley(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "parley")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/parley").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// pushWorld is a migrated database of one dialect, its URL for the child
// process, and a forum on it for the test's own writes.
func pushWorld(t *testing.T, dialect string) (string, server) {
	t.Helper()
	url := dbtest.EmptyURL(t, dialect)
	db, err := models.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrations.Up(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return url, server{forum: services.New(db, services.Config{})}
}

// rawStdio is a stdio client that speaks JSON-RPC by hand, the way a
// channel host reads notifications: every line of stdout in order.
type rawStdio struct {
	in    io.WriteCloser
	lines chan map[string]any
}

func startRaw(t *testing.T, bin, url, token string, args ...string) *rawStdio {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	cmd.Env = append(os.Environ(), "PARLEY_TOKEN="+token, "PARLEY_DATABASE_URL="+url)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	r := &rawStdio{in: in, lines: make(chan map[string]any, 64)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				r.lines <- m
			}
		}
		close(r.lines)
	}()
	return r
}

func (r *rawStdio) send(t *testing.T, msg map[string]any) {
	t.Helper()
	msg["jsonrpc"] = "2.0"
	raw, _ := json.Marshal(msg)
	if _, err := r.in.Write(append(raw, '\n')); err != nil {
		t.Fatal(err)
	}
}

// next reads lines until one satisfies match, within pushBound.
func (r *rawStdio) next(t *testing.T, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.After(pushBound)
	for {
		select {
		case m, ok := <-r.lines:
			if !ok {
				t.Fatalf("stdout closed before %s", what)
			}
			if match(m) {
				return m
			}
		case <-deadline:
			t.Fatalf("no %s within %s", what, pushBound)
		}
	}
}

// handshake initializes as Claude Code does and returns the capabilities.
func (r *rawStdio) handshake(t *testing.T) map[string]any {
	t.Helper()
	r.send(t, map[string]any{"id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "channel-host", "version": "1"}}})
	res := r.next(t, "the initialize answer", func(m map[string]any) bool { return m["id"] == float64(1) })
	r.send(t, map[string]any{"method": "notifications/initialized"})
	return res["result"].(map[string]any)["capabilities"].(map[string]any)
}

// TestChannelPushesTurns runs `parley mcp --channel` as Claude Code does,
// a child process on stdio: it declares claude/channel, and when bob asks
// alice a question, alice's session receives notifications/claude/channel
// naming the thread and the message, with no call from the client. Without
// --channel nothing of it is declared.
func TestChannelPushesTurns(t *testing.T) {
	bin := buildParley(t)
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			url, srv := pushWorld(t, dialect)
			alice, bob := srv.token(t, "alice"), srv.token(t, "bob")
			plain := startRaw(t, bin, url, alice)
			if caps := plain.handshake(t); caps["experimental"] != nil {
				t.Fatalf("without --channel the session declares %v", caps["experimental"])
			}
			ch := startRaw(t, bin, url, alice, "--channel")
			caps := ch.handshake(t)
			exp, _ := caps["experimental"].(map[string]any)
			if _, ok := exp[mcp.ChannelCapability]; !ok {
				t.Fatalf("--channel does not declare %s: %v", mcp.ChannelCapability, caps)
			}
			// The session is ready once it answers a call.
			ch.send(t, map[string]any{"id": 2, "method": "tools/list"})
			ch.next(t, "the tools/list answer", func(m map[string]any) bool { return m["id"] == float64(2) })

			ctx := context.Background()
			bobCaller, err := srv.forum.Authenticate(ctx, bob)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				posted, err := srv.forum.Post(ctx, bobCaller, []byte(fmt.Sprintf(`{"kind":"ask","body":"Which port does linkd use? (%d)","to":{"identity":"ainotes:alice"}}`, i)))
				if err != nil {
					t.Fatal(err)
				}
				note := ch.next(t, "a channel event for "+posted.Thread.ID, func(m map[string]any) bool {
					if m["method"] != mcp.ChannelMethod {
						return false
					}
					meta, _ := m["params"].(map[string]any)["meta"].(map[string]any)
					return meta["thread"] == posted.Thread.ID
				})
				params := note["params"].(map[string]any)
				meta := params["meta"].(map[string]any)
				content, _ := params["content"].(string)
				if meta["message"] != posted.Message.ID || meta["kind"] != "ask" || meta["author"] != "ainotes:bob" || meta["addressed"] != "true" ||
					!strings.Contains(content, posted.Thread.ID) || strings.Contains(content, "\n") {
					t.Fatalf("channel event %v does not name the turn %s/%s", params, posted.Thread.ID, posted.Message.ID)
				}
				for key := range meta {
					if strings.ContainsAny(key, "-.") {
						t.Errorf("meta key %q is not an identifier (Claude Code drops those)", key)
					}
				}
			}
		})
	}
}

// TestInboxResourceSubscription follows alice's inbox as a resource with
// mcp-go's client over stdio: subscribed to parley://inbox/ainotes:alice
// (resources/subscribe up to MCP 2025-11-25, a subscriptions/listen stream
// from 2026-07-28), it receives notifications/resources/updated when bob
// asks her, and the resource then lists the turn. Another identity's inbox
// is not readable.
func TestInboxResourceSubscription(t *testing.T) {
	bin := buildParley(t)
	for _, tc := range []struct{ dialect, era string }{{"sqlite", "legacy"}, {"sqlite", "modern"}, {"postgres", "legacy"}, {"postgres", "modern"}} {
		dialect := tc.dialect
		t.Run(dialect+"/"+tc.era, func(t *testing.T) {
			url, srv := pushWorld(t, dialect)
			alice, bob := srv.token(t, "alice"), srv.token(t, "bob")
			tr := transport.NewStdio(bin, append(os.Environ(), "PARLEY_TOKEN="+alice, "PARLEY_DATABASE_URL="+url), "mcp")
			var opts []client.ClientOption
			if tc.era == "legacy" {
				opts = append(opts, client.WithLegacyProtocolOnly()) // as the clients in use today speak
			}
			c := client.NewClient(tr, opts...)
			if err := c.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			notes := make(chan mcpgo.JSONRPCNotification, 64)
			c.OnNotification(func(n mcpgo.JSONRPCNotification) { notes <- n })
			ctx := context.Background()
			res, err := c.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{ClientInfo: mcpgo.Implementation{Name: "parley-test", Version: "1"}}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Capabilities.Resources == nil || !res.Capabilities.Resources.Subscribe {
				t.Fatalf("the stdio session does not offer resource subscriptions: %+v", res.Capabilities)
			}
			uri := mcp.InboxURI("ainotes:alice")
			if err := c.Subscribe(ctx, mcpgo.SubscribeRequest{Params: mcpgo.SubscribeParams{URI: uri}}); err != nil {
				t.Fatal(err)
			}
			if tc.era == "modern" {
				stop, err := c.ListenAsync(ctx, c.PendingSubscriptionFilter(), func(err error) { t.Errorf("listen: %v", err) })
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(stop)
				waitNote(t, notes, "the subscription's acknowledgement", func(n mcpgo.JSONRPCNotification) bool {
					return n.Method == string(mcpgo.MethodNotificationSubscriptionsAcknowledged)
				})
			}
			first, err := c.ReadResource(ctx, mcpgo.ReadResourceRequest{Params: mcpgo.ReadResourceParams{URI: uri}})
			if err != nil || !strings.Contains(first.Contents[0].(mcpgo.TextResourceContents).Text, `"items":[]`) {
				t.Fatalf("alice's inbox before any ask: %v %+v", err, first)
			}
			if _, err := c.ReadResource(ctx, mcpgo.ReadResourceRequest{Params: mcpgo.ReadResourceParams{URI: mcp.InboxURI("ainotes:bob")}}); err == nil || !strings.Contains(err.Error(), "token_right_missing") {
				t.Fatalf("alice read bob's inbox: %v", err)
			}

			bobCaller, _ := srv.forum.Authenticate(ctx, bob)
			posted, err := srv.forum.Post(ctx, bobCaller, []byte(`{"kind":"ask","body":"Is the migration safe to run twice?","to":{"identity":"ainotes:alice"}}`))
			if err != nil {
				t.Fatal(err)
			}
			waitNote(t, notes, "notifications/resources/updated for "+uri, func(n mcpgo.JSONRPCNotification) bool {
				return n.Method == string(mcpgo.MethodNotificationResourceUpdated) && n.Params.AdditionalFields["uri"] == uri
			})
			after, err := c.ReadResource(ctx, mcpgo.ReadResourceRequest{Params: mcpgo.ReadResourceParams{URI: uri}})
			if err != nil {
				t.Fatal(err)
			}
			var box services.Inbox
			json.Unmarshal([]byte(after.Contents[0].(mcpgo.TextResourceContents).Text), &box)
			if len(box.Items) != 1 || box.Items[0].Thread.ID != posted.Thread.ID {
				t.Fatalf("after the update alice's inbox is %+v, want the turn of %s", box, posted.Thread.ID)
			}
		})
	}
}

func waitNote(t *testing.T, notes <-chan mcpgo.JSONRPCNotification, what string, match func(mcpgo.JSONRPCNotification) bool) {
	t.Helper()
	deadline := time.After(pushBound)
	for {
		select {
		case n := <-notes:
			if match(n) {
				return
			}
		case <-deadline:
			t.Fatalf("no %s within %s", what, pushBound)
		}
	}
}
