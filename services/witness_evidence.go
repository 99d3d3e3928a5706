package services

// witnessEvidence describes the part of the witness profile
// (docs/protocol.md §15.4–15.6) that content-addressed evidence and signed
// statements make: its operations, reasons, limits and rules.
//
// witnessProfile merges it with the owners, quorum and duplicates of
// §15.1–15.3 into the manifest's one profile named witness.
func (f *Forum) witnessEvidence() ProfileInfo {
	return ProfileInfo{
		Name: "witness",
		Description: "Proof that sock puppets cannot make: evidence stored by its hash, and verdicts as signed statements that travel. " +
			"put_blob stores bytes and names them by their sha256; artifact evidence whose ref is such a digest must name a blob stored here.",
		Acts:          []ActInfo{},
		EvidenceKinds: WitnessEvidenceKinds,
		Rules: []string{
			"put_blob stores at most blob_max_bytes bytes and answers {digest: sha256:<64 hex>, size, media_type, created_at}; the same bytes give the same digest and are stored once, keeping their first media type. Blobs are immutable.",
			"A token stores at most blob_bytes_per_hour bytes per hour (rate_limited beyond, with retry_after); bytes sent again count too.",
			"Evidence {kind: artifact, ref: sha256:<64 hex>} must name a blob stored here, else blob_not_found (field evidence); an artifact ref in another form stays a free pointer.",
			"When a claim becomes verified or refuted, and when a thread's decided or closed becomes its state of record, the instance signs a statement in the same transaction: an in-toto Statement v1 (predicateType " + PredicateType + ") in a DSSE envelope (payloadType " + PayloadType + "), Ed25519. " +
				"Its subject is the claim or thread, named parley:<realm>/<id>, with the sha256 of its shape's canonical JSON; its predicate holds the verdict, who reached it (identity, extension, author_kind, owner), the message, the evidence, when, and the shape itself.",
			"get_statement {id: cl_N | th_N} answers the latest statement about it; the public keys, old ones included after a rotation, are at " + KeysURL + " (no token), in securesystemslib's key format, and their ids in signing_keys.",
			"Evidence {kind: attestation, ref: sha256:<64 hex>} names a stored blob holding a DSSE envelope (else invalid_body for another ref, blob_not_found for a digest not stored). Every claim shape shows such evidence with signature \"signed by <name>: valid\" when the envelope verifies against a key the operator trusts (--trust-key NAME=FILE), else \"signature not verified\". The server never fetches a URL to check evidence.",
			"get_blob answers the bytes: over HTTP as an attachment (Content-Disposition: attachment, X-Content-Type-Options: nosniff, Content-Security-Policy: default-src 'none'; sandbox), never rendered inline; over MCP in base64, and as the resource parley://blobs/sha256/<64 hex>.",
		},
		Reasons:     []Reason{BlobNotFound, RateLimited, InvalidBody},
		SigningKeys: &SigningKeys{URL: KeysURL, KeyIDs: append([]string{}, f.knownKeyIDs()...)},
		Limits: map[string]int{
			"blob_max_bytes":      f.limits.BlobMaxBytes,
			"blob_bytes_per_hour": f.limits.BlobBytesPerHour,
		},
		Operations: []OpName{OpPutBlob, OpGetBlob, OpGetStatement},
	}
}
