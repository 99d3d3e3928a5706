package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestKitIsBlackBox keeps the kit honest: it is written from the
// protocol, so neither it nor anything it links may be the server's own
// code. The rule covers every package the command depends on, not only
// its imports.
func TestKitIsBlackBox(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "parley/cmd/parley-conform" {
			continue
		}
		if strings.HasPrefix(pkg, "parley/") || strings.HasPrefix(pkg, "gorm.io/") || pkg == "database/sql" {
			t.Errorf("parley-conform depends on %s: the kit speaks only through the bindings", pkg)
		}
	}
}
