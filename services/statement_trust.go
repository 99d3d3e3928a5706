package services

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"gorm.io/gorm"
)

// Statements as evidence across forums (docs/protocol.md §15.6): an
// evidence item {kind: attestation, ref: sha256:…} names a stored blob
// holding a DSSE envelope; the claim shows it "signed by <name>: valid"
// when the envelope verifies against a key the operator trusts, else
// "signature not verified". Only stored bytes and configured keys are
// read: the server never fetches a URL to check evidence.

// TrustedKey is a named list of public keys the operator trusts, such as
// another forum's parley-keys.json.
type TrustedKey struct {
	Name string
	Keys []PublicKey
}

// SignatureUnverified is how attestation evidence reads without a trusted
// signature.
const SignatureUnverified = "signature not verified"

var trustNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$`)

// ParseTrustedKey reads a trusted key's file: a parley-keys.json (every key
// it lists, old generations included) or one key in the same format.
func ParseTrustedKey(name string, raw []byte) (TrustedKey, error) {
	if !trustNameRE.MatchString(name) {
		return TrustedKey{}, fmt.Errorf("trusted key name %q: want 1 to 64 of A-Z a-z 0-9 . _ : -", name)
	}
	var set KeySet
	if err := json.Unmarshal(raw, &set); err == nil && len(set.Keys) > 0 {
		return TrustedKey{Name: name, Keys: set.Keys}, nil
	}
	var one PublicKey
	if err := json.Unmarshal(raw, &one); err != nil || one.KeyVal.Public == "" {
		return TrustedKey{}, errors.New("want a parley-keys.json ({keys: [...]}) or one key {keyid, keytype, scheme, keyval: {public}}")
	}
	return TrustedKey{Name: name, Keys: []PublicKey{one}}, nil
}

// signatureOf checks one attestation's blob against the trusted keys.
//
// Reading: a blob that is no DSSE envelope, or whose signature no trusted
// key verifies, reads "signature not verified" alike: either way nothing
// vouches for it here. The first trusted name, in the operator's order,
// whose keys verify it is shown.
func (f *Forum) signatureOf(db *gorm.DB, ref string) string {
	blob, err := readBlob(db, ref, true)
	if err != nil {
		return SignatureUnverified
	}
	env, err := ReadEnvelope(blob.Data)
	if err != nil {
		return SignatureUnverified
	}
	for _, t := range f.trusted {
		if _, err := VerifyStatement(context.Background(), t.Keys, env); err == nil {
			return "signed by " + t.Name + ": valid"
		}
	}
	return SignatureUnverified
}

// annotateClaims sets the signature of every attestation evidence item of
// the claims, each blob checked once.
func (f *Forum) annotateClaims(db *gorm.DB, claims []Claim) {
	seen := map[string]string{}
	mark := func(items []Evidence) {
		for i := range items {
			if items[i].Kind != "attestation" {
				continue
			}
			s, ok := seen[items[i].Ref]
			if !ok {
				s = f.signatureOf(db, items[i].Ref)
				seen[items[i].Ref] = s
			}
			items[i].Signature = s
		}
	}
	for c := range claims {
		mark(claims[c].Evidence)
		for i := range claims[c].Attestations {
			mark(claims[c].Attestations[i].Evidence)
		}
		for i := range claims[c].Refutations {
			mark(claims[c].Refutations[i].Evidence)
		}
		if claims[c].VerifiedBy != nil {
			mark(claims[c].VerifiedBy.Evidence)
		}
	}
}
