package main_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"parley/internal/testkit"
	"parley/models"
)

// notifyBound is how long the server may take to send a notification: it
// only fires when one never comes.
const notifyBound = time.Minute

// TestOperatorKit runs the server as an operator would — secrets from
// files, JSON logs, metrics on, under a fake systemd — through a scripted
// conversation over the API, /mcp and the web pages, and checks what an
// operator relies on: READY=1, WATCHDOG=1 and STOPPING=1 on the notify
// socket; /metrics refused outside its allow-list and without its token,
// and with it counting what happened; /readyz's JSON and `parley
// healthcheck`; one JSON log line per request with its id, and none of
// the secrets used anywhere in the log.
func TestOperatorKit(t *testing.T) {
	eachDB(t, func(t *testing.T, db string) {
		const (
			password    = "correct horse battery staple 7Qx"
			dbPassword  = "db-pw-Zr8mK2"
			metricsTok  = "metrics-token-Lp4nW9"
			secretBody  = "Which port does the staging proxy listen on, 8443 or 9443?"
			secretBody2 = "Is the rollout window Thursday at 14:00 UTC?"
		)
		if models.IsPostgres(db) {
			// Trust authentication ignores the password; the log must not
			// show it all the same.
			db = strings.Replace(db, "postgres://postgres@", "postgres://postgres:"+dbPassword+"@", 1)
		}
		tokens := agentTokens(t, db, 2)
		ok(t, parley(t, []string{"PARLEY_PASSWORD=" + password}, "", "user", "add", "ada", "--db", db))

		dir := t.TempDir()
		dbFile, tokFile := filepath.Join(dir, "db"), filepath.Join(dir, "metrics-token")
		for f, v := range map[string]string{dbFile: db + "\n", tokFile: metricsTok + "\n"} {
			if err := os.WriteFile(f, []byte(v), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		notes := listenNotify(t, filepath.Join(dir, "notify.sock"))
		addr := testkit.FreeAddr(t)
		p := testkit.StartEnv(t, addr,
			[]string{"NOTIFY_SOCKET=" + filepath.Join(dir, "notify.sock"), "WATCHDOG_USEC=200000", "PARLEY_METRICS_TOKEN_FILE=" + tokFile},
			binary, "serve", "--db-file", dbFile, "--addr", addr, "--metrics", "--metrics-allow", "192.0.2.0/24", "--log-format", "json")
		notes.want(t, "READY=1")
		notes.want(t, "WATCHDOG=1")

		client := &http.Client{Timeout: 10 * time.Second}
		// The API: two asks, one refused token.
		for _, body := range []string{secretBody, secretBody2} {
			if status, out, err := call(client, "POST", p.URL("/api/v1/messages"), tokens[0], map[string]any{"kind": "ask", "body": body}); err != nil || status != 201 {
				t.Fatalf("post: %d %v %v", status, out, err)
			}
		}
		if status, _, _ := call(client, "GET", p.URL("/api/v1/me"), "not-a-token", nil); status != 401 {
			t.Fatalf("a bad token: %d, want 401", status)
		}
		// /mcp: a post, and a post refused for its body.
		for _, args := range []string{`{"kind":"ask","body":"` + secretBody + ` (mcp)"}`, `{"kind":"ask"}`} {
			req, _ := http.NewRequest("POST", p.URL("/mcp"), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"post","arguments":`+args+`}}`))
			req.Header.Set("Authorization", "Bearer "+tokens[1])
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		// The pages: ada signs in with her password.
		jar, _ := cookiejar.New(nil)
		browser := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		form, err := browser.Get(p.URL("/signin"))
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(form.Body)
		form.Body.Close()
		resp, err := browser.PostForm(p.URL("/signin"), url.Values{"_csrf": {between(string(page), `name="_csrf" value="`, `"`)}, "name": {"ada"}, "password": {password}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-in: %d", resp.StatusCode)
		}
		requestID := resp.Header.Get("X-Request-Id")
		if requestID == "" {
			t.Fatal("no X-Request-Id")
		}

		// /metrics: from loopback, outside the allow-list, refused without
		// the token or with a wrong one; answered with it.
		for _, tok := range []string{"", "wrong", metricsTok[:len(metricsTok)-1]} {
			if status, _ := scrape(t, p.URL("/metrics"), tok); status != http.StatusForbidden {
				t.Errorf("scrape with token %q: %d, want 403", tok, status)
			}
		}
		status, text := scrape(t, p.URL("/metrics"), metricsTok)
		if status != 200 {
			t.Fatalf("scrape: %d\n%s", status, text)
		}
		for _, want := range []string{
			`parley_posts{author_kind="llm",kind="ask"} 3`,
			`parley_requests_total{binding="http",code="2xx",operation="post"} 2`,
			`parley_requests_total{binding="http",code="4xx",operation="whoami"} 1`,
			`parley_refusals_total{binding="http",reason="token_invalid"} 1`,
			`parley_requests_total{binding="mcp",code="2xx",operation="post"} 1`,
			`parley_requests_total{binding="mcp",code="4xx",operation="post"} 1`,
			`parley_refusals_total{binding="mcp",reason="invalid_body"} 1`,
			`parley_requests_total{binding="web",code="3xx",operation="POST /signin"} 1`,
			`parley_request_duration_seconds_count{binding="http",operation="post"} 2`,
			`parley_open_calls{kind="wait"} 0`,
			`parley_escalations 0`,
			`parley_overdue_asks 0`,
			`parley_database_counts_up 1`,
			`parley_db_pool_max_connections `,
			`parley_feed_degraded 0`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("the scrape lacks %q", want)
			}
		}
		for _, leak := range []string{tokens[0], tokens[1], "human:ada", "agent0"} {
			if strings.Contains(text, leak) {
				t.Errorf("the scrape names %q", leak)
			}
		}

		// /readyz in JSON, and the health check command.
		req, _ := http.NewRequest("GET", p.URL("/readyz"), nil)
		req.Header.Set("Accept", "application/json")
		rresp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var ready struct {
			Status string
			Checks map[string]struct{ Status string }
		}
		json.NewDecoder(rresp.Body).Decode(&ready)
		rresp.Body.Close()
		if ready.Status != "ready" || ready.Checks["database"].Status != "ok" || ready.Checks["listener"].Status == "" {
			t.Errorf("/readyz JSON: %+v", ready)
		}
		ok(t, parley(t, nil, "", "healthcheck", "--url", p.URL("/readyz")))
		if r := parley(t, nil, "", "healthcheck", "--url", "http://"+testkit.FreeAddr(t)+"/readyz"); r.Code != 1 {
			t.Errorf("healthcheck of nothing: exit %d, want 1", r.Code)
		}

		p.Cmd.Process.Signal(syscall.SIGTERM)
		notes.want(t, "STOPPING=1")
		if err := p.Wait(); err != nil {
			t.Errorf("after SIGTERM: %v\n%s", err, p.Tail())
		}

		// The log: JSON lines, one per request with its id, no secret.
		log := p.Stderr.String()
		for _, secret := range []string{password, dbPassword, metricsTok, tokens[0], tokens[1], secretBody, secretBody2, "Bearer"} {
			if strings.Contains(log, secret) {
				t.Errorf("the log holds the secret %q", secret)
			}
		}
		var found bool
		sc := bufio.NewScanner(strings.NewReader(log))
		for sc.Scan() {
			var line map[string]any
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Errorf("not a JSON log line: %q", sc.Text())
				continue
			}
			if line["msg"] == "request" && line["request_id"] == requestID {
				found = true
				if line["operation"] != "POST /signin" || line["status"] != float64(303) || line["duration_ms"] == nil {
					t.Errorf("the sign-in's log line: %v", line)
				}
			}
			if s, _ := line["msg"].(string); strings.Contains(s, ".go:") {
				t.Errorf("a log line names a source file: %q", sc.Text())
			}
		}
		if !found {
			t.Errorf("no log line has the request id %s:\n%s", requestID, log)
		}
	})
}

// scrape GETs /metrics with the bearer token, if any.
func scrape(t *testing.T, u, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// notifySocket is a fake systemd: the datagrams sent to NOTIFY_SOCKET.
type notifySocket chan string

func listenNotify(t *testing.T, path string) notifySocket {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch := make(notifySocket, 1024)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				close(ch)
				return
			}
			select {
			case ch <- string(buf[:n]):
			default: // a watchdog the test no longer reads
			}
		}
	}()
	return ch
}

// want waits for a datagram that holds state.
func (n notifySocket) want(t *testing.T, state string) {
	t.Helper()
	deadline := time.After(notifyBound)
	for {
		select {
		case got, open := <-n:
			if !open {
				t.Fatalf("the notify socket closed before %s", state)
			}
			if strings.Contains(got, state) {
				return
			}
		case <-deadline:
			t.Fatalf("no %s in %s", state, notifyBound)
		}
	}
}
