// Package testkit holds what the black-box tests of several packages share:
// building a command once, starting `parley serve` as an operator does and
// waiting for it to answer, free loopback addresses, and reading decoded
// JSON. Only tests import it.
package testkit

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Build compiles the command at pkg (an import path such as
// "parley/cmd/parley") into dir and returns the binary's path. It is meant
// for TestMain, so it returns an error rather than failing a test.
func Build(dir, pkg string) (string, error) {
	binary := filepath.Join(dir, filepath.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", binary, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %v\n%s", pkg, err, out)
	}
	return binary, nil
}

// CleanEnv is the test's environment minus every PARLEY_ variable: a
// developer's PARLEY_DATABASE_URL must not send the tests to their
// database.
func CleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PARLEY_") {
			env = append(env, kv)
		}
	}
	return env
}

// FreeAddr returns a loopback address whose port was free a moment ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Dig follows keys (strings) and list indexes (ints) into decoded JSON;
// a missing step gives nil.
func Dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k < 0 || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// Str is Dig for a string; "" when the value is missing or not a string.
func Str(v any, path ...any) string {
	s, _ := Dig(v, path...).(string)
	return s
}

// SyncBuffer collects output written from several goroutines (a
// process's stderr, a server's logs).
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
