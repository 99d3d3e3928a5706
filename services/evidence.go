package services

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/invopop/jsonschema"
)

// EvidenceKind says what a piece of evidence points at (docs/protocol.md §10).
type EvidenceKind string

// EvidenceKindInfo describes an evidence kind for the manifest.
type EvidenceKindInfo struct {
	Kind        EvidenceKind `json:"kind"`
	Description string       `json:"description"`
}

// EvidenceKinds are the eight kinds of §10, in its order.
var EvidenceKinds = []EvidenceKindInfo{
	{"url", "A web address where the proof can be read."},
	{"hash", "A content hash of the proof (e.g. sha256:…)."},
	{"artifact", "The name or address of a stored artifact: a build, a file, a dataset."},
	{"commit", "A commit in a repository (hash, optionally with the repository)."},
	{"log", "Where a log shows it: a log line, a job id, a trace."},
	{"reproducer", "A command or script that reproduces it."},
	{"note", "A pointer that fits none of the kinds above, described in ref; still a pointer, not an opinion."},
	{"other", "Any other kind of pointer."},
}

// WitnessEvidenceKinds is the witness profile's evidence kind (§15.6).
var WitnessEvidenceKinds = []EvidenceKindInfo{
	{"attestation", "A stored blob (ref sha256:<64 hex>) holding a DSSE envelope, such as another forum's signed statement; the claim shows whether a key this forum trusts signed it."},
}

// allEvidenceKinds are every kind an envelope may carry.
func allEvidenceKinds() []EvidenceKindInfo {
	return append(slices.Clone(EvidenceKinds), WitnessEvidenceKinds...)
}

// JSONSchema lists the eight evidence kinds.
func (EvidenceKind) JSONSchema() *jsonschema.Schema {
	return enum(allEvidenceKinds(), func(k EvidenceKindInfo) string { return string(k.Kind) })
}

func knownEvidenceKind(k EvidenceKind) bool {
	return slices.ContainsFunc(allEvidenceKinds(), func(i EvidenceKindInfo) bool { return i.Kind == k })
}

// Evidence is one proof: a pointer, never an opinion. It is the same on the
// way in (an envelope's evidence) and on the way out (a claim's).
type Evidence struct {
	Kind EvidenceKind `json:"kind" jsonschema_description:"What ref points at."`
	Ref  string       `json:"ref" jsonschema:"minLength=1" jsonschema_description:"The pointer itself: 1 to evidence_ref_max_chars characters."`
	Note string       `json:"note,omitempty" jsonschema_description:"Optional: what the pointer shows, at most body_max_chars characters."`
	// Signature is set by the server on attestation evidence (§15.6):
	// "signed by <name>: valid" or "signature not verified".
	Signature string `json:"signature,omitempty" jsonschema_description:"Attestation evidence only, set by the server: signed by <name>: valid, when the blob's DSSE envelope verifies against a key this forum trusts; else signature not verified."`
	// Blob is what the web UI shows of the stored blob the ref names (its
	// size and media type), set for pages only: never on the wire.
	Blob *BlobMeta `json:"-"`
}

// readEvidence reads an envelope's evidence: a list of at most
// evidence_max_items proofs, each with a kind and a ref.
//
// Reading: a proof without a ref is an opinion, refused with invalid_body
// naming the item's ref; an empty list is no evidence at all (the acts
// that need some answer evidence_required). A note is at most
// body_max_chars long, as long as the message it supports.
func (f *Forum) readEvidence(raw json.RawMessage, env *Envelope) error {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return Refuse(InvalidBody, `evidence must be a list of {"kind", "ref", "note"?} objects`).On("evidence")
	}
	if len(items) > f.limits.EvidenceMaxItems {
		return Refuse(InvalidBody, "evidence has %d items; at most %d (evidence_max_items)", len(items), f.limits.EvidenceMaxItems).On("evidence")
	}
	env.Evidence = make([]Evidence, 0, len(items))
	for i, item := range items {
		ev, err := f.readProof(item, fmt.Sprintf("evidence[%d]", i))
		if err != nil {
			return err
		}
		env.Evidence = append(env.Evidence, ev)
	}
	return nil
}

func (f *Forum) readProof(raw json.RawMessage, at string) (Evidence, error) {
	obj, err := decodeObject(raw, at, at)
	if err != nil {
		return Evidence{}, err
	}
	var ev Evidence
	for _, key := range sortedKeys(obj) {
		field := at + "." + key
		var v string
		if key != "kind" && key != "ref" && key != "note" {
			return Evidence{}, Refuse(InvalidBody, "unknown field %q in %s: a proof has kind, ref and note", key, at).On(field)
		}
		if isNull(obj[key]) || json.Unmarshal(obj[key], &v) != nil {
			return Evidence{}, Refuse(InvalidBody, "%s must be a string", field).On(field)
		}
		switch key {
		case "kind":
			ev.Kind = EvidenceKind(v)
			if !knownEvidenceKind(ev.Kind) {
				return Evidence{}, Refuse(InvalidBody, "%s must be one of %s", field, evidenceKindList()).On(field)
			}
		case "ref":
			if err := f.checkText(v, field, f.limits.EvidenceRefMaxChars); err != nil {
				return Evidence{}, err
			}
			ev.Ref = v
		case "note":
			if err := f.checkText(v, field, f.limits.BodyMaxChars); err != nil {
				return Evidence{}, err
			}
			ev.Note = v
		}
	}
	if ev.Kind == "" {
		return Evidence{}, Refuse(InvalidBody, "%s.kind is required: one of %s", at, evidenceKindList()).On(at + ".kind")
	}
	if strings.TrimFunc(ev.Ref, unicode.IsSpace) == "" {
		return Evidence{}, Refuse(InvalidBody, "%s.ref is required: a proof is a pointer (a URL, a hash, a commit …), never an opinion", at).On(at + ".ref")
	}
	if ev.Kind == "attestation" && !IsBlobDigest(ev.Ref) {
		return Evidence{}, Refuse(InvalidBody, "%s.ref must be a stored blob's digest, sha256:<64 hex>, for an attestation", at).On(at + ".ref")
	}
	return ev, nil
}

func evidenceKindList() string {
	kinds := allEvidenceKinds()
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k.Kind)
	}
	return strings.Join(names, ", ")
}
