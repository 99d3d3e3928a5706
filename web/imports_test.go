package web_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBindingsDoNotTouchStorage keeps the rule "services decide, transports
// translate": the bindings never reach the database themselves.
func TestBindingsDoNotTouchStorage(t *testing.T) {
	for _, dir := range []string{".", "../mcp", "../oauth"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		if len(files) == 0 {
			t.Fatalf("no Go files in %s", dir)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				if strings.HasPrefix(path, "gorm.io/") || path == "parley/models" || path == "database/sql" {
					t.Errorf("%s imports %s: bindings must call services, not storage", file, path)
				}
			}
		}
	}
}
