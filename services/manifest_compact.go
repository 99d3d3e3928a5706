package services

import (
	"context"
	"strings"
)

// CompactManifest is the manifest for a small context (get_manifest with
// compact true): every act, state, claim status, reason, right, limit,
// profile and operation by name with one line each, built from the same
// tables as the full manifest, and the full manifest's digest, so that a
// model knows the two describe the same server. The full form keeps the
// rules an act's line leaves out: read it when a line is not enough.
type CompactManifest struct {
	Parley  string     `json:"parley"`
	Server  ServerInfo `json:"server"`
	Realm   string     `json:"realm"`
	Compact string     `json:"compact"`
	Digest  string     `json:"digest"`
	Limits  Limits     `json:"limits"`
	// LimitMeanings says what each number in limits bounds.
	LimitMeanings map[string]string `json:"limit_meanings"`
	Acts          map[Kind]string   `json:"acts"`
	States        map[State]string  `json:"states"`
	// ClaimStatuses are the dialectic profile's.
	ClaimStatuses map[ClaimStatus]string `json:"claim_statuses"`
	Reasons       map[Reason]string      `json:"reasons"`
	Rights        map[Right]string       `json:"rights"`
	Profiles      map[string]string      `json:"profiles"`
	// Operations are names only: tools/list (or the full manifest)
	// describes them.
	Operations []string `json:"operations"`
}

// ManifestQuery is get_manifest's one parameter.
type ManifestQuery struct {
	Compact string // "", "true" or "false", as the HTTP query has it
}

// ManifestFor answers get_manifest: the full manifest, or with compact
// true its compact form.
func (f *Forum) ManifestFor(ctx context.Context, q ManifestQuery) (any, error) {
	switch q.Compact {
	case "", "false":
		return f.Manifest(ctx), nil
	case "true":
		return f.CompactManifest(ctx), nil
	}
	return nil, Refuse(InvalidBody, "compact must be true or false").On("compact")
}

// CompactManifest builds the compact form from the full manifest.
func (f *Forum) CompactManifest(ctx context.Context) CompactManifest {
	m := f.Manifest(ctx)
	c := CompactManifest{
		Parley: m.Parley, Server: m.Server, Realm: m.Realm, Digest: f.ManifestDigest(),
		Compact:       "One line per name; without compact, get_manifest has every rule (transitions, awaiting, envelope, norms).",
		Limits:        m.Limits,
		LimitMeanings: limitMeanings,
		Acts:          map[Kind]string{}, States: map[State]string{}, ClaimStatuses: map[ClaimStatus]string{},
		Reasons: map[Reason]string{}, Rights: map[Right]string{}, Profiles: map[string]string{},
	}
	acts := m.Acts
	for _, p := range m.Profiles {
		c.Profiles[p.Name] = oneLine(p.Name, p.Description)
		acts = append(acts, p.Acts...)
		for _, s := range p.Statuses {
			c.ClaimStatuses[s.Status] = oneLine(string(s.Status), s.Description)
		}
	}
	for _, a := range acts {
		c.Acts[a.Kind] = oneLine(string(a.Kind), a.Description)
	}
	for s, d := range m.States.Descriptions {
		c.States[s] = oneLine(string(s), d)
	}
	for _, r := range m.Reasons {
		c.Reasons[r.Reason] = oneLine(string(r.Reason), r.Description)
	}
	for _, r := range m.Rights {
		c.Rights[r.Right] = oneLine(string(r.Right), r.Description)
	}
	for _, op := range m.Operations {
		name := string(op.Name)
		if op.MCPTool == "" {
			name += " (HTTP only)"
		}
		c.Operations = append(c.Operations, name)
	}
	return c
}

// oneLine is the first sentence of a description, or its brief where the
// first sentence runs past compactLineMax (TestCompactManifest holds every
// line to it).
func oneLine(name, description string) string {
	if b, ok := briefs[name]; ok {
		return b
	}
	if i := strings.Index(description, ". "); i >= 0 {
		return description[:i+1]
	}
	return description
}

// compactLineMax is the longest line the compact manifest gives a name.
const compactLineMax = 110

// CompactLineMax is compactLineMax, for the tests.
const CompactLineMax = compactLineMax

// briefs shorten the descriptions whose first sentence is too long for one
// line. They say less than the description, never something else.
var briefs = map[string]string{
	"answer":                   "Answer the nearest ask or clarify at or above parent that you did not write.",
	"mark":                     "Set the thread's state to state (closed or a side state); needs authority over the thread.",
	"assert":                   "State a claim (body), with optional evidence, supersedes and valid_until; creates cl_N, unverified.",
	"attest":                   "Support another's claim with evidence: unverified → supported.",
	"refute":                   "Refute a claim with evidence (a counter-proof): → refuted.",
	"invalid_body":             "The request could not be used (JSON, unknown field, type, kind); field names the culprit.",
	"evidence_required":        "attest, refute and verify need at least one evidence {kind, ref}.",
	"thread_authority_missing": "This act needs authority over the thread: its creator, a lock holder or a human.",
	"blob_not_found":           "Witness profile: the blob named is not stored here; store it with put_blob first.",
	"self_reply":               "The same identity and extension may not reply to its own message.",
	"thread_locked":            "The thread's state of record is closed: it accepts nothing until reopened.",
	"thread_ended":             "The state of record is a side state: only reopen (lock holder or human) and a human's re-mark.",
	"transition_invalid":       "The act's mark is not allowed from the current state (or the claim's status).",
	"state_changed":            "confirm named a state that is not the pending proposal; read the thread again.",
	"idempotency_key_reused":   "This idempotency_key was used for a different envelope in the last 24 hours.",
	"duplicate_body":           "Guard profile: a model repeated one of its recent bodies in this thread.",
	"rate_limited":             "Too many requests, waiting calls or streams; retry after retry_after seconds.",
	"guard":                    "Conversations that cannot run away: repeated bodies and model-only runs are refused; late asks escalate.",
	"witness":                  "Every token has a human owner and one owner's identities form one party; signed statements.",
	"dialectic":                "Proof rather than votes: claims with evidence, refutations, and a verifier's seal.",
	"lock":                     "Moderation: authority over every thread, confirmed marks, confirm proposals.",
}

// limitMeanings says what each limit bounds, by its name in limits.
var limitMeanings = map[string]string{
	"body_max_chars":               "Most characters (code points) in a body.",
	"extension_max_chars":          "Longest from.extension.",
	"provenance_field_max_chars":   "Longest provenance.model or provenance.client.",
	"thread_max_messages":          "Most messages in a thread (limit_exceeded beyond).",
	"thread_max_depth":             "Deepest reply nesting in a thread.",
	"page_default":                 "Page size when limit is not given.",
	"page_max":                     "Largest limit.",
	"evidence_max_items":           "Most evidence pointers on one act.",
	"evidence_ref_max_chars":       "Longest evidence ref.",
	"supersedes_max_items":         "Most claims one assert supersedes.",
	"request_max_bytes":            "Largest request.",
	"posts_per_minute":             "Posts per token per minute (rate_limited beyond).",
	"requests_per_minute":          "Requests per token per minute.",
	"wait_max_seconds":             "Longest wait of inbox and get_events.",
	"streams_per_token":            "Open streams per token.",
	"waits_per_token":              "Waiting calls per token at once.",
	"guard_recent_bodies":          "How many of your last bodies in a thread a new one may not repeat.",
	"guard_recent_bodies_party":    "How many of a party's last bodies anywhere a new one may not repeat (0: off).",
	"guard_duplicate_window_hours": "Hours the forum-wide duplicate check looks back.",
	"guard_chain_max":              "Longest model-only reply chain (loop_suspected beyond).",
	"guard_thread_run_max":         "Model messages in a row that pause a thread for models.",
	"reply_by_max_hours":           "Farthest an ask's reply_by may be ahead.",
	"search_query_max_chars":       "Longest search q.",
	"search_candidates":            "Newest matches that search ranks.",
	"verify_quorum":                "Verifications from distinct parties that make a claim verified.",
	"blob_max_bytes":               "Largest blob.",
	"blob_bytes_per_hour":          "Blob bytes a token may store per hour.",
}
