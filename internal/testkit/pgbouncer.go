package testkit

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"testing"
	"time"
)

// PgBouncer is a PgBouncer process of the test's own, in transaction
// mode, in front of one PostgreSQL server.
type PgBouncer struct {
	Addr string
	Log  *SyncBuffer

	t      testing.TB
	binary string
	args   []string
	cmd    *exec.Cmd
	exited chan struct{}
}

// StartPgBouncer starts Debian's pgbouncer (transaction pooling, trust
// authentication, every database of the server behind it) in front of
// the server of target, a postgres:// URL, on a free loopback port, with
// an ini written to a temporary folder; it is stopped when the test ends.
// Without the binary the test is skipped, or fails in CI (.ci/run
// installs it). As root it runs as the postgres user: PgBouncer refuses
// to run as root.
func StartPgBouncer(t testing.TB, target string) *PgBouncer {
	t.Helper()
	binary, err := exec.LookPath("pgbouncer")
	if err != nil {
		if _, statErr := os.Stat("/usr/sbin/pgbouncer"); statErr != nil {
			Missing(t, "the PgBouncer tests", "pgbouncer is not installed (apt-get install pgbouncer)")
		}
		binary = "/usr/sbin/pgbouncer"
	}
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, port = u.Host, "5432"
	}
	dir, err := os.MkdirTemp("", "pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	addr := FreeAddr(t)
	_, listenPort, _ := net.SplitHostPort(addr)
	username := u.User.Username()
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %s
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 40
`, host, port, listenPort, filepath.Join(dir, "userlist.txt"))
	for name, text := range map[string]string{"pgbouncer.ini": ini, "userlist.txt": fmt.Sprintf("%q \"\"\n", username)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{filepath.Join(dir, "pgbouncer.ini")}
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			t.Fatalf("pgbouncer refuses to run as root, and there is no postgres user to run it as: %v", err)
		}
		args = append([]string{"-u", "postgres"}, args...)
	}
	p := &PgBouncer{Addr: addr, Log: &SyncBuffer{}, t: t, binary: binary, args: args}
	p.start()
	t.Cleanup(p.stop)
	return p
}

// start runs the pgbouncer process and waits until it listens.
func (p *PgBouncer) start() {
	t := p.t
	t.Helper()
	cmd := exec.Command(p.binary, p.args...)
	cmd.Stdout, cmd.Stderr = p.Log, p.Log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	p.cmd, p.exited = cmd, exited
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", p.Addr); err == nil {
			c.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("pgbouncer exited at start:\n%s", p.Log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgbouncer never listened on %s:\n%s", p.Addr, p.Log.String())
		}
	}
}

func (p *PgBouncer) stop() { p.cmd.Process.Kill(); <-p.exited }

// Restart kills the pooler (every client connection through it breaks,
// as in a crash or a hard restart) and starts it again on the same port.
func (p *PgBouncer) Restart() {
	p.t.Helper()
	p.stop()
	p.start()
}

// URL is raw (a URL of the server behind the pooler) through the pooler.
func (p *PgBouncer) URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Host = p.Addr
	return u.String()
}
