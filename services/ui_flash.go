package services

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// A flash is what one signed-in page hands to the next across a redirect
// (post/redirect/get), read once: the tokens page shows a new secret this
// way, so that reloading the page shows the list again instead of creating
// another token.
//
// Where it is kept: servers are stateless and share only the database, so a
// flash cannot wait in a process's memory (the GET may reach another
// server). An encrypted cookie would need a key shared by every server, a
// new secret to configure and rotate. So it is a row, session_flashes,
// keyed by the session's token hash and sealed (AES-GCM) with a key derived
// from the session cookie itself, which the database never holds: a copy of
// the database, or a backup taken in the few minutes a flash lives, cannot
// open it. Reading deletes it in the same statement, so two GETs racing
// show it once.
const flashLifetime = 5 * time.Minute

// SetFlash stores v, JSON-encoded, for the next TakeFlash of the session
// whose cookie is session; it replaces an unread one.
func (f *Forum) SetFlash(ctx context.Context, session string, v any) error {
	plain, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("flash: %w", err)
	}
	aead := flashCipher(session)
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return fmt.Errorf("flash: %w", err)
	}
	sealed := aead.Seal(nonce, nonce, plain, nil)
	sum := sha256.Sum256([]byte(session))
	now := f.timestamp()
	db := f.db.WithContext(ctx)
	// Flashes never read (a closed tab) go with the next one stored.
	if err := db.Exec("DELETE FROM session_flashes WHERE expires_at < ?", now).Error; err != nil {
		return fmt.Errorf("flash: %w", err)
	}
	// expires_at first: GORM would spread a []byte right after "(" into a
	// list of values.
	err = db.Exec(`INSERT INTO session_flashes (expires_at, token_hash, sealed) VALUES (?, ?, ?)
		ON CONFLICT (token_hash) DO UPDATE SET sealed = excluded.sealed, expires_at = excluded.expires_at`,
		now.Add(flashLifetime), sum[:], sealed).Error
	if err != nil {
		return fmt.Errorf("flash: %w", err)
	}
	return nil
}

// TakeFlash reads and deletes the session's flash into v; false when there
// is none (never set, read already, or expired).
func (f *Forum) TakeFlash(ctx context.Context, session string, v any) (bool, error) {
	if session == "" {
		return false, nil
	}
	sum := sha256.Sum256([]byte(session))
	var rows []struct{ Sealed []byte }
	// An expired flash is not read; the next SetFlash deletes it.
	err := f.db.WithContext(ctx).Raw("DELETE FROM session_flashes WHERE token_hash = ? AND expires_at > ? RETURNING sealed",
		sum[:], f.timestamp()).Scan(&rows).Error
	if err != nil {
		return false, fmt.Errorf("flash: %w", err)
	}
	if len(rows) == 0 {
		return false, nil
	}
	aead := flashCipher(session)
	sealed := rows[0].Sealed
	if len(sealed) < aead.NonceSize() {
		return false, errors.New("flash: sealed value too short")
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], nil)
	if err != nil {
		return false, fmt.Errorf("flash: %w", err)
	}
	if err := json.Unmarshal(plain, v); err != nil {
		return false, fmt.Errorf("flash: %w", err)
	}
	return true, nil
}

// flashCipher is the AEAD of a session's flashes. Its key is a hash of the
// cookie under a label of its own, distinct from the stored token hash.
func flashCipher(session string) cipher.AEAD {
	key := sha256.Sum256([]byte("parley flash key\x00" + session))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		panic(err) // a 32-byte key is always valid
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return aead
}
