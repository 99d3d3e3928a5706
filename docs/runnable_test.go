// Package docs_test runs the commands of the documentation as a reader
// would: every shell block of README.md and docs/*.md marked
// "```sh runnable" or "```sh runnable-server", in a copy of the repository
// that stands in for a fresh clone (CONTRIBUTING.md, "How the tests are laid
// out").
package docs_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// serverBound is how long a server block may take to answer /healthz.
	// The first `go run` in the copy compiles the module's own packages
	// (the build cache is shared, but it keys them by their folder), which
	// takes minutes on a small, busy machine.
	serverBound = 3 * time.Minute
	// blockBound is how long a block may run; the first one to compile
	// pays the same price.
	blockBound = 5 * time.Minute
	// stopBound is how long a server gets to shut down on SIGTERM before
	// its process group is killed.
	stopBound = 20 * time.Second
	// defaultAddr is where `parley serve` listens without --addr.
	defaultAddr = "127.0.0.1:8080"
)

// block is one fenced shell block of a page.
type block struct {
	page string // the page's path from the module's root
	line int    // the line of its opening fence
	kind string // "runnable", "runnable-server", or "" for a plain block
	text string
}

func (b block) String() string {
	first, _, _ := strings.Cut(strings.TrimSpace(b.text), "\n")
	return fmt.Sprintf("%s:%d (%s)", b.page, b.line, first)
}

// TestRunnableBlocksAreWellFormed checks the marks without running
// anything: a shell block is plain, runnable or runnable-server, a runnable
// block never runs the tests (they would run this test again), and a block
// that talks to a server comes after the block that starts it.
func TestRunnableBlocksAreWellFormed(t *testing.T) {
	pages := readPages(t, moduleRoot(t))
	runnable := 0
	for _, page := range pages {
		served := map[string]bool{}
		for _, b := range page.blocks {
			if b.kind == "" {
				continue
			}
			runnable++
			if regexp.MustCompile(`\bgo\s+test\b`).MatchString(b.text) {
				t.Errorf("%s runs go test: leave it plain sh", b)
			}
			if strings.Contains(b.text, "prl_…") || regexp.MustCompile(`<[a-z][a-z ]*>`).MatchString(b.text) {
				t.Errorf("%s holds a placeholder: leave it plain sh", b)
			}
			if b.kind == "runnable-server" {
				if lines := commandLines(b.text); len(lines) != 1 {
					t.Errorf("%s: a server block is one command, not %d", b, len(lines))
				}
				served[serverAddr(b.text)] = true
				continue
			}
			for _, addr := range []string{defaultAddr, "localhost:8080"} {
				if strings.Contains(b.text, addr) && !served[defaultAddr] {
					t.Errorf("%s talks to %s, but no runnable-server block above it on the page starts a server there", b, addr)
				}
			}
		}
	}
	if runnable == 0 {
		t.Fatal("no runnable blocks found: are the fences still marked `sh runnable`?")
	}
}

// TestRunnableBlocks runs every runnable block, page by page in document
// order, in one copy of the repository, on SQLite. Each block runs in a
// shell of its own (bash -euo pipefail), so a block's variables do not
// reach the next, but the files an earlier block of the page made do. A
// runnable-server block is started, waited for until its /healthz answers,
// and kept up for the page's later blocks; it is stopped, with its whole
// process group, when the page ends or the next server block starts. After
// each page everything the page made in the copy is removed.
func TestRunnableBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the documentation's commands: minutes, not -short")
	}
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed: the documentation's commands need it", tool)
			}
			t.Skipf("%s is not installed: the documentation's commands need it", tool)
		}
	}
	root := moduleRoot(t)
	pages := readPages(t, root)
	clone := filepath.Join(t.TempDir(), "parley")
	copied := copyModule(t, root, clone)
	env := environment(t)

	for _, page := range pages {
		if !slices.ContainsFunc(page.blocks, func(b block) bool { return b.kind != "" }) {
			continue
		}
		t.Run(strings.ReplaceAll(page.path, "/", "_"), func(t *testing.T) {
			defer removeAdded(t, clone, copied)
			var srv *server
			defer func() { srv.stop(t) }()
			for _, b := range page.blocks {
				switch b.kind {
				case "runnable-server":
					srv.stop(t)
					srv = startServer(t, clone, env, b)
				case "runnable":
					runBlock(t, clone, env, b, srv)
				}
			}
		})
	}
}

// page is a Markdown file and its shell blocks.
type page struct {
	path   string
	blocks []block
}

// readPages reads README.md and docs/*.md, in that order.
func readPages(t *testing.T, root string) []page {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(docs)
	var pages []page
	for _, path := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		rel, _ := filepath.Rel(root, path)
		blocks, err := parseBlocks(path, filepath.ToSlash(rel))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, page{filepath.ToSlash(rel), blocks})
	}
	return pages
}

// parseBlocks returns the shell blocks of a Markdown file: fences at the
// start of a line whose info string begins with sh.
func parseBlocks(path, rel string) ([]block, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		blocks []block
		open   *block
		body   strings.Builder
		inside bool // inside any fenced block, shell or not
		n      int
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := sc.Text()
		fence := strings.HasPrefix(line, "```")
		switch {
		case fence && !inside:
			inside = true
			info := strings.Fields(strings.TrimPrefix(line, "```"))
			if len(info) == 0 || info[0] != "sh" {
				continue
			}
			b := block{page: rel, line: n}
			switch {
			case len(info) == 1:
			case len(info) == 2 && (info[1] == "runnable" || info[1] == "runnable-server"):
				b.kind = info[1]
			default:
				return nil, fmt.Errorf("%s:%d: unknown fence %q: a shell block is ```sh, ```sh runnable or ```sh runnable-server", rel, n, line)
			}
			open = &b
			body.Reset()
		case fence && strings.TrimSpace(line) == "```":
			inside = false
			if open != nil {
				open.text = body.String()
				blocks = append(blocks, *open)
				open = nil
			}
		case open != nil:
			body.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if inside {
		return nil, fmt.Errorf("%s: a fenced block is not closed", rel)
	}
	return blocks, nil
}

// commandLines are a block's commands: its lines without comments and blank
// lines, a line ending in a backslash joined with the next.
func commandLines(text string) []string {
	var lines []string
	joined := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			joined += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		lines = append(lines, joined+line)
		joined = ""
	}
	return lines
}

var addrFlag = regexp.MustCompile(`--addr[= ](\S+)`)

// serverAddr is where a server block listens: its --addr, else serve's
// default.
func serverAddr(text string) string {
	if m := addrFlag.FindStringSubmatch(text); m != nil {
		return strings.Trim(m[1], `'"`)
	}
	return defaultAddr
}

// moduleRoot is the folder above this one, holding go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if mod, err := os.ReadFile(filepath.Join(root, "go.mod")); err != nil || !bytes.HasPrefix(mod, []byte("module parley\n")) {
		t.Fatalf("%s is not the parley module's root: %v", root, err)
	}
	return root
}

// copyModule copies the files a fresh clone would have (what git tracks,
// and what it would track: untracked files that are not ignored) into dst,
// and returns their paths. Without git it copies everything but .git and
// node_modules.
func copyModule(t *testing.T, root, dst string) map[string]bool {
	t.Helper()
	var files []string
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err == nil {
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, filepath.FromSlash(f))
			}
		}
	} else {
		t.Logf("git ls-files: %v; copying the folder instead", err)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if !d.IsDir() {
				rel, _ := filepath.Rel(root, path)
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	copied := map[string]bool{}
	for _, rel := range files {
		src := filepath.Join(root, rel)
		info, err := os.Lstat(src)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or not a plain file
		}
		if err := copyFile(src, filepath.Join(dst, rel), info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
		copied[rel] = true
	}
	if !copied["go.mod"] || !copied["README.md"] {
		t.Fatalf("the copy lacks go.mod or README.md (%d files)", len(copied))
	}
	return copied
}

func copyFile(src, dst string, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// removeAdded removes what the blocks of a page added to the copy, so that
// the next page starts from the clone again.
func removeAdded(t *testing.T, clone string, copied map[string]bool) {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(clone, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(clone, path)
		switch {
		case rel == ".":
		case d.IsDir():
			dirs = append(dirs, path)
		case !copied[rel]:
			return os.Remove(path)
		}
		return nil
	})
	if err != nil {
		t.Errorf("cleaning the copy: %v", err)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i]) // only empty ones go: those the page made
	}
}

// environment is a reader's shell: a new home, no PARLEY_ variable (a
// developer's PARLEY_DATABASE_URL must not send the commands to their
// database), the PATH and Go's settings of the test, and the test's build
// and module caches, so that nothing is downloaded and only the copy's own
// packages compile again.
func environment(t *testing.T) []string {
	t.Helper()
	env := []string{
		"HOME=" + t.TempDir(),
		"TMPDIR=" + t.TempDir(),
		"LANG=C.UTF-8",
		"TERM=dumb",
	}
	for _, kv := range os.Environ() {
		key, _, _ := strings.Cut(kv, "=")
		switch {
		case key == "PATH", strings.HasPrefix(key, "GO"), strings.HasPrefix(key, "SSL_CERT_"),
			strings.EqualFold(key, "http_proxy"), strings.EqualFold(key, "https_proxy"):
			env = append(env, kv)
		}
	}
	// The caches and the go env file would move with HOME: pin them.
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH", "GOENV").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	for i, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		key := []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV"}[i]
		if line != "" && !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, key+"=") }) {
			env = append(env, key+"="+line)
		}
	}
	// curl must reach the local server directly, whatever proxy is set.
	noProxy := "127.0.0.1,localhost"
	if v := os.Getenv("no_proxy") + os.Getenv("NO_PROXY"); v != "" {
		noProxy += "," + v
	}
	return append(env, "no_proxy="+noProxy, "NO_PROXY="+noProxy)
}

// shell is bash as the blocks are run: strict, in the copy, in a process
// group of its own so that everything it starts can be stopped together.
func shell(ctx context.Context, dir string, env []string, text string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", text)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// runBlock runs one block to its end; it fails the test with the block's
// output (and the running server's) unless the block succeeds.
func runBlock(t *testing.T, dir string, env []string, b block, srv *server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), blockBound)
	defer cancel()
	out := &syncBuffer{}
	cmd := shell(ctx, dir, env, b.text)
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever it left in the background
	}
	if err != nil {
		msg := fmt.Sprintf("%s failed after %s: %v\n%s", b, time.Since(start).Round(time.Second), err, tail(out.String()))
		if srv != nil {
			msg += fmt.Sprintf("\nthe server (%s) said:\n%s", srv.block, tail(srv.out.String()))
		}
		t.Fatal(msg)
	}
	t.Logf("%s: ok in %s", b, time.Since(start).Round(100*time.Millisecond))
}

// server is a running server block.
type server struct {
	block block
	cmd   *exec.Cmd
	out   *syncBuffer
	done  chan struct{}
}

// startServer starts a server block and waits until its /healthz answers
// 200, failing the test when the bound passes or the block ends first.
func startServer(t *testing.T, dir string, env []string, b block) *server {
	t.Helper()
	addr := serverAddr(b.text)
	if ln, err := net.Listen("tcp", addr); err != nil {
		msg := fmt.Sprintf("%s: %s is taken (%v); the documentation's servers listen there: stop what does", b, addr, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	} else {
		ln.Close()
	}
	s := &server{block: b, out: &syncBuffer{}, done: make(chan struct{})}
	s.cmd = shell(context.Background(), dir, env, b.text)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	start := time.Now()
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()

	client := &http.Client{Timeout: 2 * time.Second}
	url := "http://" + addr + "/healthz"
	deadline := time.Now().Add(serverBound)
	poll := time.NewTicker(250 * time.Millisecond)
	defer poll.Stop()
	for {
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-s.done:
			t.Fatalf("%s ended (%v) before %s answered:\n%s", b, s.cmd.ProcessState, url, tail(s.out.String()))
		case <-poll.C:
		}
		if time.Now().After(deadline) {
			s.stop(t)
			t.Fatalf("%s: %s did not answer within %s:\n%s", b, url, serverBound, tail(s.out.String()))
		}
	}
	select {
	case <-s.done:
		t.Fatalf("%s ended, though %s answered: another server holds %s?\n%s", b, url, addr, tail(s.out.String()))
	default:
	}
	t.Logf("%s: serving in %s", b, time.Since(start).Round(100*time.Millisecond))
	return s
}

// stop ends a server's process group: SIGTERM, then SIGKILL if it is still
// there after stopBound.
func (s *server) stop(t *testing.T) {
	if s == nil || s.cmd.Process == nil {
		return
	}
	pgid := s.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(stopBound):
		t.Errorf("%s did not stop within %s of SIGTERM; killing it", s.block, stopBound)
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.done
	}
	syscall.Kill(-pgid, syscall.SIGKILL) // anything of the group left behind
}

// syncBuffer is a bytes.Buffer that a process may write while the test
// reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tail is the end of a command's output, enough to see why it failed.
func tail(s string) string {
	const max = 4000
	if len(s) > max {
		return "…" + s[len(s)-max:]
	}
	return s
}
