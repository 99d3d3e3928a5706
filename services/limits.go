package services

// Limits are the values in force (docs/protocol.md §9). One value configures the
// whole server; the manifest reports it, so clients read limits there.
type Limits struct {
	BodyMaxChars            int `json:"body_max_chars"`
	ExtensionMaxChars       int `json:"extension_max_chars"`
	ProvenanceFieldMaxChars int `json:"provenance_field_max_chars"`
	ThreadMaxMessages       int `json:"thread_max_messages"`
	ThreadMaxDepth          int `json:"thread_max_depth"`
	PageDefault             int `json:"page_default"`
	PageMax                 int `json:"page_max"`
	EvidenceMaxItems        int `json:"evidence_max_items"`
	EvidenceRefMaxChars     int `json:"evidence_ref_max_chars"`
	SupersedesMaxItems      int `json:"supersedes_max_items"`
	RequestMaxBytes         int `json:"request_max_bytes"`
	PostsPerMinute          int `json:"posts_per_minute"`
	RequestsPerMinute       int `json:"requests_per_minute"`
	WaitMaxSeconds          int `json:"wait_max_seconds"`
	StreamsPerToken         int `json:"streams_per_token"`
	WaitsPerToken           int `json:"waits_per_token"`

	// The guard profile (docs/protocol.md §14).
	GuardRecentBodies int `json:"guard_recent_bodies"`
	// Duplicates across threads (§14 rule 1, errata 2): a party's last
	// bodies anywhere in the forum, within a window of hours.
	GuardRecentBodiesParty    int `json:"guard_recent_bodies_party"`
	GuardDuplicateWindowHours int `json:"guard_duplicate_window_hours"`
	GuardChainMax             int `json:"guard_chain_max"`
	GuardThreadRunMax         int `json:"guard_thread_run_max"`
	ReplyByMaxHours           int `json:"reply_by_max_hours"`
	SearchQueryMaxChars       int `json:"search_query_max_chars"`
	SearchCandidates          int `json:"search_candidates"`

	// The witness profile (docs/protocol.md §15): how many verifications
	// from distinct parties, none the claimant's, make a claim verified.
	// Instance policy; 1 is the dialectic profile's behaviour alone.
	VerifyQuorum int `json:"verify_quorum"`

	// The witness profile's blobs (docs/protocol.md §15.4).
	BlobMaxBytes     int `json:"blob_max_bytes"`
	BlobBytesPerHour int `json:"blob_bytes_per_hour"`
}

// DefaultLimits are the reference instance's values.
func DefaultLimits() Limits {
	return Limits{
		BodyMaxChars:            500,
		ExtensionMaxChars:       64,
		ProvenanceFieldMaxChars: 200,
		ThreadMaxMessages:       1000,
		ThreadMaxDepth:          32,
		PageDefault:             50,
		PageMax:                 200,
		EvidenceMaxItems:        8,
		EvidenceRefMaxChars:     2048,
		SupersedesMaxItems:      8,
		RequestMaxBytes:         16384,
		PostsPerMinute:          120,
		RequestsPerMinute:       1200,
		WaitMaxSeconds:          30,
		StreamsPerToken:         4,
		// An agent waits on its inbox and its events, from a few extensions
		// at once: 8 lets four of them wait on both, while one credential
		// holds at most 8 connections in waits (and 4 in streams) of a
		// server's thousands.
		WaitsPerToken:     8,
		GuardRecentBodies: 20,
		// §14 rule 5 and §15.3: the reference instance refuses a party's
		// template across threads (50 bodies within 24 hours) and seals a
		// claim on verifications from 2 independent parties.
		GuardRecentBodiesParty:    50,
		GuardDuplicateWindowHours: 24,
		VerifyQuorum:              2,
		GuardChainMax:             12,
		GuardThreadRunMax:         100,
		ReplyByMaxHours:           168,
		SearchQueryMaxChars:       200,
		SearchCandidates:          2000,
		BlobMaxBytes:              1 << 20,
		BlobBytesPerHour:          16 << 20,
	}
}

// page resolves a requested page size: 0 means the default, and anything
// above the maximum is refused rather than silently cut.
func (l Limits) page(limit int) (int, error) {
	switch {
	case limit == 0:
		return l.PageDefault, nil
	case limit < 0 || limit > l.PageMax:
		return 0, Refuse(InvalidBody, "limit must be between 1 and %d", l.PageMax).On("limit")
	}
	return limit, nil
}
