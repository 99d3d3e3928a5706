package testkit

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Replicated is a PostgreSQL primary of the test's own with a streaming
// hot standby of it (pg_basebackup -R), each a cluster in a temporary
// folder on a free loopback port: the real parts of a read-replica
// deployment, made on demand, so that the tests run the same locally and
// in CI. Both are stopped when the test ends.
type Replicated struct {
	t                      testing.TB
	bin                    string
	dir                    string
	PrimaryPort, StandPort string
	primary, standby       *pgProc
	cred                   *syscall.Credential
}

type pgProc struct {
	cmd    *exec.Cmd
	log    *SyncBuffer
	exited chan struct{}
}

// postgresBin finds the newest installed PostgreSQL's programs.
func postgresBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_basebackup")); err == nil {
			return d
		}
	}
	if p, err := exec.LookPath("pg_basebackup"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// StartReplicated initdb's a primary, starts it, takes a base backup of it
// into a standby (pg_basebackup -R -X stream) and starts that. Without
// PostgreSQL's server programs the test is skipped, or fails in CI. As
// root the clusters run as the postgres user: PostgreSQL refuses root.
func StartReplicated(t testing.TB) *Replicated {
	t.Helper()
	bin := postgresBin()
	if bin == "" {
		Missing(t, "the read-replica tests", "PostgreSQL's server programs (initdb, pg_basebackup) are not installed (apt-get install postgresql)")
	}
	dir, err := os.MkdirTemp("", "replicated-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	r := &Replicated{t: t, bin: bin, dir: dir}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("PostgreSQL refuses to run as root, and there is no postgres user to run it as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		r.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		os.Chown(dir, uid, gid)
	}
	_, r.PrimaryPort, _ = net.SplitHostPort(FreeAddr(t))
	_, r.StandPort, _ = net.SplitHostPort(FreeAddr(t))
	r.run("initdb", "-D", r.path("primary"), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	conf := "\nlisten_addresses = '127.0.0.1'\nfsync = off\nfull_page_writes = off\nwal_level = replica\nmax_wal_senders = 8\n" +
		"hot_standby = on\nmax_connections = 300\nshared_buffers = 32MB\nwal_keep_size = 256MB\nhot_standby_feedback = on\n"
	f, err := os.OpenFile(filepath.Join(r.path("primary"), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(conf)
	f.Close()
	r.primary = r.start("primary", r.PrimaryPort)
	r.run("pg_basebackup", "-h", "127.0.0.1", "-p", r.PrimaryPort, "-U", "postgres", "-D", r.path("standby"), "-R", "-X", "stream", "-c", "fast", "--no-sync")
	r.standby = r.start("standby", r.StandPort)
	t.Cleanup(func() {
		for _, p := range []*pgProc{r.standby, r.primary} {
			p.stop()
		}
	})
	return r
}

func (r *Replicated) path(name string) string { return filepath.Join(r.dir, name) }

// run runs one of PostgreSQL's programs to its end, as the clusters' user.
func (r *Replicated) run(name string, args ...string) {
	r.t.Helper()
	cmd := exec.Command(filepath.Join(r.bin, name), args...)
	cmd.Dir = r.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		r.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
}

// start starts the postmaster of cluster name on port and waits until it
// accepts connections.
func (r *Replicated) start(name, port string) *pgProc {
	r.t.Helper()
	cmd := exec.Command(filepath.Join(r.bin, "postgres"), "-D", r.path(name), "-p", port, "-k", r.dir)
	cmd.Dir = r.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	p := &pgProc{cmd: cmd, log: &SyncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	go func() { cmd.Wait(); close(p.exited) }()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		check := exec.Command(filepath.Join(r.bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", port)
		if check.Run() == nil {
			return p
		}
		select {
		case <-p.exited:
			r.t.Fatalf("postgres (%s) exited at start:\n%s", name, p.log.String())
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("postgres (%s) never accepted connections on %s:\n%s", name, port, p.log.String())
		}
	}
}

// stop shuts a postmaster down (fast shutdown) and waits for it.
func (p *pgProc) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// URL is the postgres:// URL of database db on the primary or the standby.
func (r *Replicated) URL(standby bool, db string) string {
	port := r.PrimaryPort
	if standby {
		port = r.StandPort
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%s/%s?sslmode=disable", port, db)
}

// StopStandby shuts the standby down; StartStandby starts it again, where
// it resumes streaming.
func (r *Replicated) StopStandby() { r.standby.stop() }

// StartStandby starts the standby again after StopStandby.
func (r *Replicated) StartStandby() {
	r.t.Helper()
	r.standby = r.start("standby", r.StandPort)
}

// Promote ends the standby's recovery: it becomes a primary of its own,
// no longer following the first.
func (r *Replicated) Promote() {
	r.t.Helper()
	r.run("pg_ctl", "promote", "-w", "-D", r.path("standby"))
}

// Logs are both servers' logs, for a failing test.
func (r *Replicated) Logs() string {
	return "primary:\n" + r.primary.log.String() + "\nstandby:\n" + r.standby.log.String()
}
