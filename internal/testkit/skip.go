package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// announced holds the groups this test binary has already announced.
var announced sync.Map

// Missing skips t because something a group of tests needs is missing,
// or fails it in CI (CI=true), where .ci/run must provide everything.
// group names the tests ("browser tests"), why says what is missing and
// how to get it.
//
// Outside CI it also says so once per group and package on the terminal:
// `go test ./...` shows a passing package's output only with -v, and a
// newcomer must learn what the run left out without it.
func Missing(t testing.TB, group, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s cannot run: %s (.ci/run must provide it)", group, why)
	}
	if _, seen := announced.LoadOrStore(group, true); !seen {
		announce(fmt.Sprintf("go test: %s skipped %s: %s\n", packageName(), group, why))
	}
	t.Skipf("%s skipped: %s", group, why)
}

// announce writes line to the terminal, past go test's capture of a
// passing package's output; without a terminal (a pipe, a CI log) there
// is nobody to tell at once, and -v shows the skip as usual.
func announce(line string) {
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer tty.Close()
	tty.WriteString(line)
}

// packageName is the package under test, from the test binary's name
// (web.test → web).
func packageName() string {
	return strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
}
