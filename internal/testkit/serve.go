package testkit

import (
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startBound is how long a server may take to answer its first /healthz:
// generous, since a loaded machine may take seconds to start a process;
// it only fires when the server hangs.
const startBound = 2 * time.Minute

// Proc is a running server process, started the way an operator starts it.
type Proc struct {
	Cmd            *exec.Cmd
	Addr           string
	Stdout, Stderr *SyncBuffer
	exited         chan error
}

// StartServe starts `binary serve` on db with extra flags, through prefix
// (e.g. prlimit) when given, and waits until /healthz answers. The process
// is killed when the test ends.
func StartServe(t testing.TB, binary, db string, prefix []string, flags ...string) *Proc {
	t.Helper()
	addr := FreeAddr(t)
	return Start(t, addr, append(append(prefix, binary, "serve", "--db", db, "--addr", addr), flags...)...)
}

// Start runs the command args, which serves at addr, and waits until its
// /healthz answers. The process is killed when the test ends.
func Start(t testing.TB, addr string, args ...string) *Proc {
	t.Helper()
	return StartEnv(t, addr, nil, args...)
}

// StartEnv is Start with env ("KEY=value") added to the clean
// environment (CleanEnv).
func StartEnv(t testing.TB, addr string, env []string, args ...string) *Proc {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(CleanEnv(), env...)
	p := &Proc{Cmd: cmd, Addr: addr, Stdout: &SyncBuffer{}, Stderr: &SyncBuffer{}, exited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.Stdout, p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); <-p.exited })
	go func() { p.exited <- cmd.Wait() }()
	p.waitHealthy(t)
	return p
}

func (p *Proc) waitHealthy(t testing.TB) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(startBound)
	for {
		resp, err := client.Get(p.URL("/healthz"))
		if err == nil {
			resp.Body.Close()
			return
		}
		select {
		case err := <-p.exited:
			p.exited <- err
			t.Fatalf("server exited early (%v):\n%s", err, p.Stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("server never answered /healthz in %s: %v\n%s", startBound, err, p.Stderr.String())
		}
	}
}

// URL is the server's address with path.
func (p *Proc) URL(path string) string { return "http://" + p.Addr + path }

// Tail is the end of the server's log, for a failure message.
func (p *Proc) Tail() string {
	log := p.Stderr.String()
	return log[max(0, len(log)-4000):]
}

// WaitLog waits until the server's log holds s and reports whether it
// came within the start bound. A line the server wrote before it served
// can still be in the pipe when its first answer arrives: the log reaches
// Stderr through a goroutine of os/exec.
func (p *Proc) WaitLog(s string) bool {
	for deadline := time.Now().Add(startBound); !strings.Contains(p.Stderr.String(), s); {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Proc) Kill() {
	p.Cmd.Process.Signal(syscall.SIGKILL)
	err := <-p.exited
	p.exited <- err
}

// Alive reports whether the process still runs.
func (p *Proc) Alive() bool {
	select {
	case err := <-p.exited:
		p.exited <- err
		return false
	default:
		return true
	}
}

// Wait waits for the process to exit by itself (after a signal, say) and
// returns how it ended.
func (p *Proc) Wait() error {
	err := <-p.exited
	p.exited <- err
	return err
}
