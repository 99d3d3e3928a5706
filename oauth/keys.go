package oauth

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"

	jose "github.com/go-jose/go-jose/v4"
)

// signingKey signs the ID token zitadel/oidc adds to every code exchange
// (it is an OpenID provider first; MCP clients ignore the ID token). It
// is Ed25519, derived from the database's sealing key, so that every
// server holds the same key without storing another: published at
// /oauth/keys.
type signingKey struct {
	id   string
	priv ed25519.PrivateKey
}

func deriveSigningKey(sealing [32]byte) signingKey {
	mac := hmac.New(sha256.New, sealing[:])
	mac.Write([]byte("parley oauth id token signing key"))
	seed := mac.Sum(nil)
	priv := ed25519.NewKeyFromSeed(seed)
	sum := sha256.Sum256(priv.Public().(ed25519.PublicKey))
	return signingKey{id: "oauth-" + hex.EncodeToString(sum[:8]), priv: priv}
}

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.EdDSA }
func (k signingKey) Key() any                                    { return k.priv }
func (k signingKey) ID() string                                  { return k.id }

// publicKey is the signing key as the key set shows it.
type publicKey struct{ signingKey }

func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.EdDSA }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return k.priv.Public() }
