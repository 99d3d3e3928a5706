package models_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"parley/models"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestGORMLogsThroughSlog: the database driver's log goes to slog's
// default logger — a failed statement at warn, with its placeholders and
// never its values, without a source path; a record not found, and a
// statement after the pool closed, at debug only.
func TestGORMLogsThroughSlog(t *testing.T) {
	var logs lockedBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	t.Cleanup(func() { slog.SetDefault(prev) })

	db, err := models.Open(filepath.Join(t.TempDir(), "log.db"))
	if err != nil {
		t.Fatal(err)
	}
	const secret = "s3cret-value-in-a-parameter"
	db.Exec("SELECT * FROM no_such_table WHERE x = ?", secret)
	var u models.User
	db.Exec("CREATE TABLE users (id integer primary key, name text)")
	db.Where("name = ?", secret).First(&u)
	sqlDB, _ := db.DB()
	sqlDB.Close()
	db.Exec("SELECT ?", secret)

	out := logs.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"level":"WARN"`) || !strings.Contains(lines[0], "no_such_table") ||
		!strings.Contains(lines[0], "x = ?") {
		t.Fatalf("want one warning, for the missing table, got:\n%s", out)
	}
	for _, leak := range []string{secret, ".go:", "record not found", "database is closed"} {
		if strings.Contains(out, leak) {
			t.Errorf("the log holds %q:\n%s", leak, out)
		}
	}
}
