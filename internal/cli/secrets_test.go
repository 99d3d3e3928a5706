package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretFiles checks that every secret flag reads its value from a
// file named on the command line or in the environment, with the command
// line first, and that naming the value and a file at once is refused.
func TestSecretFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "db")
	if err := os.WriteFile(file, []byte("postgres://u:s3cret@db/parley\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	const fromFile = "postgres://u:s3cret@db/parley"
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    string // --db after parsing
		usage   bool   // a UsageError
		noLeaks bool
	}{
		{name: "flag file", args: []string{"--db-file", file}, want: fromFile},
		{name: "env file", env: map[string]string{"PARLEY_DATABASE_URL_FILE": file}, want: fromFile},
		{name: "flag beats env file", args: []string{"--db", "x.db"}, env: map[string]string{"PARLEY_DATABASE_URL_FILE": file}, want: "x.db"},
		{name: "flag file beats env", args: []string{"--db-file", file}, env: map[string]string{"PARLEY_DATABASE_URL": "y.db"}, want: fromFile},
		{name: "env alone", env: map[string]string{"PARLEY_DATABASE_URL": "y.db"}, want: "y.db"},
		{name: "flag and flag file", args: []string{"--db", "x.db", "--db-file", file}, usage: true},
		{name: "env and env file", env: map[string]string{"PARLEY_DATABASE_URL": "y.db", "PARLEY_DATABASE_URL_FILE": file}, usage: true},
		{name: "missing file", args: []string{"--db-file", filepath.Join(dir, "nope")}, usage: true},
		{name: "empty file", args: []string{"--db-file", empty}, usage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"PARLEY_DATABASE_URL", "PARLEY_DATABASE_URL_FILE"} {
				t.Setenv(k, tt.env[k])
			}
			var cfg Config
			fs := NewFlagSet("parley test", "parley test")
			cfg.DBFlag(fs)
			_, err := ParseFlags(fs, tt.args)
			var usage UsageError
			if tt.usage {
				if !errors.As(err, &usage) {
					t.Fatalf("err = %v, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.DB != tt.want {
				t.Fatalf("--db = %q, want %q", cfg.DB, tt.want)
			}
		})
	}
}

// TestEverySecretHasAFileFlag checks that each flag in Secrets gets its
// --NAME-file from ParseFlags, and that its value is set through the
// flag's own checks (--db-listen-url refuses a non-postgres URL from a
// file as from the command line, without quoting the file's content).
func TestEverySecretHasAFileFlag(t *testing.T) {
	fs := NewFlagSet("parley test", "parley test")
	for _, name := range Secrets {
		fs.String(name, "", "")
	}
	if _, err := ParseFlags(fs, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range Secrets {
		if fs.Lookup(name+"-file") == nil {
			t.Errorf("no --%s-file", name)
		}
	}
	file := filepath.Join(t.TempDir(), "listen")
	if err := os.WriteFile(file, []byte("mysql://secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	var cfg Config
	fs = NewFlagSet("parley test", "parley test")
	cfg.ListenFlag(fs)
	_, err := ParseFlags(fs, []string{"--db-listen-url-file", file})
	if err == nil || err.Error() == "" || strings.Contains(err.Error(), "secret") {
		t.Fatalf("err = %v, want a refusal that does not quote the file", err)
	}
}
