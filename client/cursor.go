package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// CursorStore keeps Follow's inbox cursor across restarts. Follow saves a
// cursor only once the turn before it was handled, so a store that kept
// the last Save hands a restarted agent exactly the turns it had not
// finished. key names the identity, the extension and the inbox view (see
// CursorKey): one store may serve several agents.
type CursorStore interface {
	// Load returns the cursor saved under key, "" when there is none.
	Load(ctx context.Context, key string) (string, error)
	// Save replaces the cursor under key. It must be durable when it
	// returns, for the guarantee to hold across a crash.
	Save(ctx context.Context, key, cursor string) error
}

// CursorKey is the key Follow keeps its cursor under: one per identity,
// extension and inbox view, since each reads a turn list of its own and
// the addressed view's cursors are its own (docs/protocol.md §8).
func CursorKey(identity, extension string, addressed bool) string {
	view := "inbox"
	if addressed {
		view = "addressed"
	}
	return identity + "/" + extension + "/" + view
}

// MemoryStore keeps cursors in memory: a restart of the process starts
// over, but a Follow restarted within it resumes. Its zero value is ready.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string]string
}

// Load implements CursorStore.
func (s *MemoryStore) Load(_ context.Context, key string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key], nil
}

// Save implements CursorStore.
func (s *MemoryStore) Save(_ context.Context, key, cursor string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]string{}
	}
	s.m[key] = cursor
	return nil
}

// FileStore keeps each key's cursor in a file of its own in a folder,
// replaced atomically: written to a temporary file, synced, renamed over
// the old one, and the folder synced, so that a crash leaves the old
// cursor or the new one, never a torn one.
type FileStore struct {
	Dir string
}

// Load implements CursorStore.
func (s FileStore) Load(_ context.Context, key string) (string, error) {
	b, err := os.ReadFile(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return strings.TrimSpace(string(b)), err
}

// Save implements CursorStore.
func (s FileStore) Save(_ context.Context, key, cursor string) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(s.Dir, ".cursor-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // gone after the rename; left only by a failure
	if _, err := f.WriteString(cursor + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, s.path(key)); err != nil {
		return err
	}
	d, err := os.Open(s.Dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// path is key's file: its readable characters, then a hash that keeps two
// keys apart once the others are replaced.
func (s FileStore) path(key string) string {
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, strings.ToLower(key))
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(s.Dir, clean+"-"+hex.EncodeToString(sum[:4])+".cursor")
}
