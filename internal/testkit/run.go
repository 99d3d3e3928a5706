package testkit

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// runBound is the longest one command may run: a hang, not slowness.
const runBound = 5 * time.Minute

// Result is what a command did.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs binary with stdin and the test's environment minus every
// PARLEY_ variable (CleanEnv), plus env, and returns what it did; it fails
// the test only when the command could not run at all.
func Run(t testing.TB, binary string, env []string, stdin string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), runBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(CleanEnv(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s %v: %v", binary, args, err)
	}
	return Result{Code: cmd.ProcessState.ExitCode(), Stdout: stdout.String(), Stderr: stderr.String()}
}
