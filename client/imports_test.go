package client_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestClientKnowsOnlyTheWire: what agent builders import must not drag
// the server in. The client package, and the example agent built on it,
// depend on the standard library and on client alone — never on
// services, web, mcp, models, the database drivers or GORM — counting
// every package they import, directly or not (tests aside).
func TestClientKnowsOnlyTheWire(t *testing.T) {
	allowed := map[string]bool{"parley/client": true}
	for _, pkg := range []string{"parley/client", "parley/examples/agent"} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep != pkg && !allowed[dep] {
				t.Errorf("%s depends on %s: the client knows the wire, never the server's packages", pkg, dep)
			}
		}
	}
}
