package client_test

import (
	"context"
	"os"
	"testing"

	"parley/client"
)

// TestCursorStores: each key keeps its own cursor, a Save replaces the
// last, a key never saved loads "", and a FileStore leaves one file per
// key and no temporary file behind.
func TestCursorStores(t *testing.T) {
	dir := t.TempDir()
	stores := map[string]client.CursorStore{"file": client.FileStore{Dir: dir}, "memory": &client.MemoryStore{}}
	keys := []string{
		client.CursorKey("ainotes:bob", "", false),
		client.CursorKey("ainotes:bob", "", true),
		client.CursorKey("ainotes:bob", "w1", false),
		client.CursorKey("ainotes:bob", "W1", false), // equal once lowercased: still its own file
		client.CursorKey("human:ada", "", false),
	}
	ctx := context.Background()
	for name, s := range stores {
		t.Run(name, func(t *testing.T) {
			for i, k := range keys {
				if got, err := s.Load(ctx, k); err != nil || got != "" {
					t.Fatalf("%s before any save: %q, %v", k, got, err)
				}
				for _, c := range []string{"c1.first", "c1.second" + k} {
					if err := s.Save(ctx, k, c); err != nil {
						t.Fatal(err)
					}
				}
				for _, earlier := range keys[:i+1] {
					if got, _ := s.Load(ctx, earlier); got != "c1.second"+earlier {
						t.Errorf("%s loads %q", earlier, got)
					}
				}
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(keys) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the folder holds %v, want one file per key", names)
	}
}
