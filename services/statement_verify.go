package services

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/secure-systems-lab/go-securesystemslib/signerverifier"
)

// VerifiedStatement is what a statement's check found.
type VerifiedStatement struct {
	KeyID     string
	Subject   string // the subject's name, parley:<realm>/<id>
	Digest    string // its sha256, recomputed from the predicate's shape
	Verdict   string
	Predicate map[string]any
}

// ReadEnvelope reads a DSSE envelope from what get_statement answers, a
// Statement, or the envelope itself.
func ReadEnvelope(raw []byte) (SignedEnvelope, error) {
	var wrapped struct {
		Statement *struct {
			Envelope *SignedEnvelope `json:"envelope"`
		} `json:"statement"`
		Envelope *SignedEnvelope `json:"envelope"`
		SignedEnvelope
	}
	if err := json.Unmarshal(raw, &wrapped); err != nil {
		return SignedEnvelope{}, fmt.Errorf("not JSON: %w", err)
	}
	switch {
	case wrapped.Statement != nil && wrapped.Statement.Envelope != nil:
		return *wrapped.Statement.Envelope, nil
	case wrapped.Envelope != nil:
		return *wrapped.Envelope, nil
	case wrapped.PayloadType != "" && wrapped.Payload != "":
		return wrapped.SignedEnvelope, nil
	}
	return SignedEnvelope{}, errors.New("no DSSE envelope: want {payloadType, payload, signatures}, or get_statement's answer")
}

// VerifyStatement checks an envelope against a set of public keys with
// securesystemslib's DSSE verifier, then reads its in-toto statement and
// recomputes the subject's digest from the shape in the predicate.
func VerifyStatement(ctx context.Context, keys []PublicKey, env SignedEnvelope) (VerifiedStatement, error) {
	var verifiers []dsse.Verifier
	for _, k := range keys {
		if k.KeyType != "ed25519" {
			continue
		}
		v, err := signerverifier.NewED25519SignerVerifierFromSSLibKey(&signerverifier.SSLibKey{
			KeyType: k.KeyType, Scheme: k.Scheme, KeyID: k.KeyID, KeyVal: signerverifier.KeyVal{Public: k.KeyVal.Public}})
		if err != nil {
			return VerifiedStatement{}, fmt.Errorf("key %s: %w", k.KeyID, err)
		}
		verifiers = append(verifiers, v)
	}
	if len(verifiers) == 0 {
		return VerifiedStatement{}, errors.New("no Ed25519 key to verify with")
	}
	ev, err := dsse.NewMultiEnvelopeVerifier(1, verifiers...)
	if err != nil {
		return VerifiedStatement{}, err
	}
	e := dsse.Envelope{PayloadType: env.PayloadType, Payload: env.Payload}
	for _, s := range env.Signatures {
		e.Signatures = append(e.Signatures, dsse.Signature{KeyID: s.KeyID, Sig: s.Sig})
	}
	accepted, err := ev.Verify(ctx, &e)
	if err != nil {
		return VerifiedStatement{}, fmt.Errorf("signature not verified: %w", err)
	}
	if env.PayloadType != PayloadType {
		return VerifiedStatement{}, fmt.Errorf("payload type %q, want %q", env.PayloadType, PayloadType)
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return VerifiedStatement{}, err
	}
	var st struct {
		Type    string `json:"_type"`
		Subject []struct {
			Name   string            `json:"name"`
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
		PredicateType string         `json:"predicateType"`
		Predicate     map[string]any `json:"predicate"`
	}
	if err := json.Unmarshal(payload, &st); err != nil || len(st.Subject) != 1 {
		return VerifiedStatement{}, errors.New("the payload is no in-toto statement with one subject")
	}
	out := VerifiedStatement{KeyID: accepted[0].KeyID, Subject: st.Subject[0].Name, Predicate: st.Predicate}
	out.Verdict, _ = st.Predicate["verdict"].(string)
	if st.PredicateType == PredicateType {
		shape := st.Predicate["claim"]
		if shape == nil {
			shape = st.Predicate["thread"]
		}
		if out.Digest, err = SubjectDigest(shape); err != nil || out.Digest != st.Subject[0].Digest["sha256"] {
			return VerifiedStatement{}, fmt.Errorf("the subject's digest %s is not the sha256 of the predicate's shape (%s)", st.Subject[0].Digest["sha256"], out.Digest)
		}
	}
	return out, nil
}
