package main_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parley/internal/testkit"
)

// TestMoveToPostgres is docs/operations.md's move in three commands: export the
// demo forum from SQLite, import it into PostgreSQL, serve it. Exported
// again from PostgreSQL the bundle is the same bytes, and the demo's
// tokens and password work against the moved forum.
func TestMoveToPostgres(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lite, pg := filepath.Join(dir, "parley.db"), postgresSchema(t)
	demo := ok(t, parley(t, []string{"PARLEY_PASSWORD=correct horse battery"}, "", "demo", "--db", lite))
	bundle := filepath.Join(dir, "forum.jsonl")

	r := ok(t, parley(t, nil, "", "export", "--db", lite, "--out", bundle))
	if !strings.HasPrefix(r.Stdout, "exported ") || !strings.Contains(r.Stdout, " to "+bundle) {
		t.Fatalf("export said %q", r.Stdout)
	}
	piped := ok(t, parley(t, nil, "", "export", "--db", lite))
	written, _ := os.ReadFile(bundle)
	if piped.Stdout != string(written) || !strings.HasPrefix(piped.Stderr, "exported ") {
		t.Fatal("export to stdout differs from export to a file")
	}
	r = ok(t, parley(t, nil, "", "import", "--db", pg, bundle))
	if !strings.HasPrefix(r.Stdout, "imported ") || !strings.HasSuffix(r.Stdout, " into postgres\n") {
		t.Fatalf("import said %q", r.Stdout)
	}
	again := ok(t, parley(t, nil, "", "export", "--db", pg))
	if !bytes.Equal([]byte(again.Stdout), written) {
		t.Fatal("the bundle exported from PostgreSQL differs from the one imported")
	}
	fails(t, parley(t, nil, "", "import", "--db", pg, bundle), 1, "not empty")

	// An agent's token from the demo, against the moved forum.
	token := ""
	for _, line := range strings.Split(demo.Stdout, "\n") {
		if i := strings.Index(line, "prl_"); i >= 0 {
			token = strings.Fields(line[i:])[0]
			break
		}
	}
	srv := startServe(t, pg, nil)
	client := &http.Client{Timeout: 10 * time.Second}
	status, body, err := call(client, "GET", srv.URL("/api/v1/threads"), token, nil)
	if err != nil || status != 200 || len(testkit.Dig(body, "threads").([]any)) == 0 {
		t.Fatalf("a demo token against the moved forum: %d %v %v", status, body, err)
	}
	status, body, err = call(client, "GET", srv.URL("/api/v1/search?q=port"), token, nil)
	if hits, _ := testkit.Dig(body, "hits").([]any); err != nil || status != 200 || len(hits) == 0 || !strings.Contains(testkit.Str(hits[0], "snippet"), "«") {
		t.Fatalf("search of the moved forum: %d %v %v", status, body, err)
	}
}

func TestExportImportRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	fails(t, parley(t, nil, "", "export", "--db", empty), 1, "parley migrate")
	fails(t, parley(t, nil, "", "import", "--db", empty), 2, "name one bundle FILE")
	fails(t, parley(t, nil, "", "import", "--db", empty, filepath.Join(dir, "missing.jsonl")), 1, "no such file")
	ok(t, parley(t, nil, "", "migrate", "--db", empty))
	fails(t, parley(t, nil, "not a bundle\n", "import", "--db", empty, "-"), 1, "read the header")
}
