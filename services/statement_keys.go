package services

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"gorm.io/gorm"
)

// The instance's signing keys (docs/protocol.md §15.5): Ed25519, kept in
// the database (table instance_keys) so that every server process of one
// forum signs with the same key. The highest generation signs; older
// generations stay published, so statements signed before a rotation
// still verify.

// KeysURL is where the public keys are served, without a token.
const KeysURL = "/.well-known/parley-keys.json"

// instanceKey is one generation of the instance's key.
type instanceKey struct {
	Generation int64
	KeyID      string
	PublicKey  []byte
	PrivateKey []byte
	CreatedAt  time.Time
}

// PublicKey is a published key, in the key format of securesystemslib
// (keytype, scheme, keyval.public in hex, keyid), which its DSSE
// verifiers load as they are.
type PublicKey struct {
	KeyID      string    `json:"keyid"`
	KeyType    string    `json:"keytype"`
	Scheme     string    `json:"scheme"`
	KeyVal     KeyVal    `json:"keyval"`
	Generation int64     `json:"generation"`
	Current    bool      `json:"current" jsonschema_description:"true for the key that signs now; older keys verify older statements."`
	CreatedAt  time.Time `json:"created_at"`
}

// KeyVal holds a public key in hex.
type KeyVal struct {
	Public string `json:"public"`
}

// KeySet answers GET /.well-known/parley-keys.json.
type KeySet struct {
	Realm string      `json:"realm"`
	Keys  []PublicKey `json:"keys"`
}

// keyIDOf names a public key as the DSSE library does (the SHA256
// fingerprint of its SSH encoding).
func keyIDOf(pub ed25519.PublicKey) (string, error) { return dsse.SHA256KeyID(pub) }

// EnsureInstanceKey makes sure the instance has a signing key, generating
// the first on first start, and remembers the key ids the manifest names.
// Servers call it as they start, before the manifest's digest is taken.
//
// Reading: the manifest names the keys this process read at start (and
// after its own rotation), so that its digest stays one value for the
// process's life; a rotation by another process shows in the manifest
// after a restart, and at once in the keys document, which reads the
// database.
//
// Reading: two servers starting at once both insert generation 1; the
// primary key lets one win and the other's insert do nothing, and both then
// read the same key.
func (f *Forum) EnsureInstanceKey(ctx context.Context) error {
	err := f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		_, err := f.signingKey(tx)
		return err
	})
	if err == nil {
		f.rememberKeys(ctx)
	}
	return err
}

// RotateInstanceKey adds a new generation, which signs from now on; the
// old keys stay published. It answers the new key's id.
func (f *Forum) RotateInstanceKey(ctx context.Context) (string, error) {
	var id string
	err := f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		cur, err := f.signingKey(tx)
		if err != nil {
			return err
		}
		k, err := f.insertKey(tx, cur.Generation+1)
		id = k.KeyID
		return err
	})
	if err == nil {
		f.rememberKeys(ctx)
	}
	return id, err
}

// signingKey is the key that signs: the highest generation, generated if
// there is none.
func (f *Forum) signingKey(tx *gorm.DB) (instanceKey, error) {
	keys, err := readKeys(tx)
	if err != nil {
		return instanceKey{}, err
	}
	if len(keys) == 0 {
		if _, err := f.insertKey(tx, 1); err != nil {
			return instanceKey{}, err
		}
		if keys, err = readKeys(tx); err != nil || len(keys) == 0 {
			return instanceKey{}, fmt.Errorf("instance key: none after insert: %v", err)
		}
	}
	return keys[len(keys)-1], nil
}

// insertKey generates a key of a generation; if another process inserted
// that generation first, its key stands and this one is dropped.
func (f *Forum) insertKey(tx *gorm.DB, generation int64) (instanceKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return instanceKey{}, err
	}
	id, err := keyIDOf(pub)
	if err != nil {
		return instanceKey{}, err
	}
	k := instanceKey{Generation: generation, KeyID: id, PublicKey: pub, PrivateKey: priv.Seed(), CreatedAt: f.timestamp()}
	err = tx.Exec(`INSERT INTO instance_keys (generation, key_id, public_key, private_key, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (generation) DO NOTHING`, k.Generation, k.KeyID, k.PublicKey, k.PrivateKey, k.CreatedAt).Error
	if err != nil {
		return instanceKey{}, fmt.Errorf("insert instance key: %w", err)
	}
	return k, nil
}

// readKeys reads every generation, oldest first.
func readKeys(tx *gorm.DB) ([]instanceKey, error) {
	var keys []instanceKey
	err := tx.Raw("SELECT generation, key_id, public_key, private_key, created_at FROM instance_keys ORDER BY generation").Scan(&keys).Error
	if err != nil {
		return nil, fmt.Errorf("read instance keys: %w", err)
	}
	return keys, nil
}

func keyIDs(keys []instanceKey) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.KeyID
	}
	return out
}

// rememberKeys refreshes the key ids the manifest names.
func (f *Forum) rememberKeys(ctx context.Context) {
	if keys, err := readKeys(f.db.WithContext(ctx)); err == nil {
		f.keyIDs.Store(keyIDs(keys))
	}
}

// knownKeyIDs are the key ids this process has seen, oldest first.
func (f *Forum) knownKeyIDs() []string {
	ids, _ := f.keyIDs.Load().([]string)
	return ids
}

// Keys answers the published public keys (no token needed).
func (f *Forum) Keys(ctx context.Context) (KeySet, error) {
	keys, err := readKeys(f.db.WithContext(ctx))
	if err != nil {
		return KeySet{}, err
	}
	out := KeySet{Realm: f.realm, Keys: []PublicKey{}}
	for i, k := range keys {
		out.Keys = append(out.Keys, PublicKey{KeyID: k.KeyID, KeyType: "ed25519", Scheme: "ed25519",
			KeyVal: KeyVal{Public: hex.EncodeToString(k.PublicKey)}, Generation: k.Generation,
			Current: i == len(keys)-1, CreatedAt: k.CreatedAt.UTC()})
	}
	return out, nil
}

// keySigner signs DSSE's pre-authentication encoding with an instance key;
// dsse.EnvelopeSigner builds the envelope around it.
type keySigner struct{ key instanceKey }

func (s keySigner) Sign(_ context.Context, data []byte) ([]byte, error) {
	return ed25519.Sign(ed25519.NewKeyFromSeed(s.key.PrivateKey), data), nil
}

func (s keySigner) KeyID() (string, error) { return s.key.KeyID, nil }
