package protodoc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestDocIsFresh regenerates docs/protocol.md in memory and fails when the
// committed file differs: a table edited by hand, or a Go value changed
// without regenerating.
func TestDocIsFresh(t *testing.T) {
	committed, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := Generate(context.Background(), committed)
	if err != nil {
		t.Fatalf("docs/protocol.md: %v", err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Fatalf("docs/protocol.md is stale: run go generate ./internal/protodoc\n%s", firstDifference(committed, fresh))
	}
}

// firstDifference shows the first line where the committed file and the
// fresh one differ.
func firstDifference(committed, fresh []byte) string {
	a, b := strings.Split(string(committed), "\n"), strings.Split(string(fresh), "\n")
	line := func(l []string, i int) string {
		if i < len(l) {
			return l[i]
		}
		return "(end of file)"
	}
	for i := range max(len(a), len(b)) {
		if x, y := line(a, i), line(b, i); x != y {
			return fmt.Sprintf("first difference at line %d:\n  committed: %s\n  generated: %s", i+1, x, y)
		}
	}
	return ""
}

func TestRewrite(t *testing.T) {
	tables := map[string]string{"a": "| x |\n"}
	doc := "intro\n<!-- generated:a -->\nold\nrows\n<!-- end generated -->\noutro\n"
	got, err := Rewrite([]byte(doc), tables)
	want := "intro\n<!-- generated:a -->\n\n| x |\n\n<!-- end generated -->\noutro\n"
	if err != nil || string(got) != want {
		t.Fatalf("Rewrite = %q, %v; want %q", got, err, want)
	}
	if again, err := Rewrite(got, tables); err != nil || string(again) != want {
		t.Fatalf("Rewrite of its own output = %q, %v; want it unchanged", again, err)
	}
	for name, bad := range map[string]string{
		"unknown table": "<!-- generated:a -->\n<!-- end generated -->\n<!-- generated:b -->\n<!-- end generated -->\n",
		"twice":         "<!-- generated:a -->\n<!-- end generated -->\n<!-- generated:a -->\n<!-- end generated -->\n",
		"never ended":   "<!-- generated:a -->\nrows\n",
		"stray end":     "<!-- generated:a -->\n<!-- end generated -->\n<!-- end generated -->\n",
		"no region":     "no tables here\n",
	} {
		if _, err := Rewrite([]byte(bad), tables); err == nil {
			t.Errorf("%s: Rewrite accepted %q", name, bad)
		}
	}
}

func TestTextEscapesOutsideCodeOnly(t *testing.T) {
	got := text("anyone (\"*\") or `a|b <c>` and <x> | y")
	want := "anyone (\"\\*\") or `a\\|b <c>` and &lt;x> \\| y"
	if got != want {
		t.Fatalf("text = %q; want %q", got, want)
	}
}
