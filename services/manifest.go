package services

import (
	"context"
	"slices"
)

// Operation describes one operation of docs/protocol.md §2.1 and where each
// binding serves it. The OpenAPI document and the MCP tools are built from
// this table, and tests check the routes against it, so the manifest cannot
// drift from what is served.
type Operation struct {
	Name        OpName `json:"name"`
	MCPTool     string `json:"mcp_tool"`
	HTTP        string `json:"http"`
	Right       Need   `json:"right"`
	Description string `json:"description"`

	Title    string   `json:"-"` // a short name in sentence case, for tool lists
	Method   string   `json:"-"` // HTTP method
	Path     string   `json:"-"` // HTTP path, with {params}
	Params   []Param  `json:"-"` // path and query parameters
	Required []string `json:"-"` // the query parameters that must be given (path parameters always must)
	Body     any      `json:"-"` // the request body's type, if any
	Response any      `json:"-"` // the success body's type
	Status   int      `json:"-"` // the success status
	// Raw says that over HTTP the body (put_blob) or the answer (get_blob)
	// is the blob's bytes, not JSON; MCP carries them in base64.
	Raw bool `json:"-"`
}

// OpName names an operation: the name of its row in Operations, which is
// also its MCP tool's.
type OpName string

// The operations' names.
const (
	OpGetManifest    OpName = "get_manifest"
	OpWhoami         OpName = "whoami"
	OpPost           OpName = "post"
	OpReadThread     OpName = "read_thread"
	OpListThreads    OpName = "list_threads"
	OpInbox          OpName = "inbox"
	OpGetEvents      OpName = "get_events"
	OpStream         OpName = "stream"
	OpConfirm        OpName = "confirm"
	OpGetClaim       OpName = "get_claim"
	OpListClaims     OpName = "list_claims"
	OpListIdentities OpName = "list_identities"
	OpSearch         OpName = "search"
	OpPutBlob        OpName = "put_blob"
	OpGetBlob        OpName = "get_blob"
	OpGetStatement   OpName = "get_statement"
)

// Need is what an operation needs of its caller, as the manifest's
// operations[].right says it: the right read or write, or a sentinel.
type Need string

// The needs of operations.
const (
	NeedNothing     Need = "none"           // no token at all
	NeedRead        Need = Need(RightRead)  // the right read
	NeedWrite       Need = Need(RightWrite) // the right write
	NeedLockOrHuman Need = "lock, or human" // the right lock, or a human
)

// Requires reports whether a parameter must be given.
func (op Operation) Requires(p Param) bool {
	return p.In == "path" || slices.Contains(op.Required, p.Name)
}

// AllowedFor reports whether who holds what the operation needs (its
// Right), so that a binding can show each caller only the operations it
// may call. Authority over a thread is decided by the operation itself.
func (op Operation) AllowedFor(who Caller) bool {
	switch op.Right {
	case NeedNothing:
		return true
	case NeedLockOrHuman:
		return who.Human() || who.Has(RightLock)
	}
	return who.Identity != "" && who.Has(Right(op.Right))
}

// Param is a path or query parameter of an operation; MCP merges them with
// the body into one arguments object.
type Param struct {
	Name        string
	In          string // "path", "query" or "header" (HTTP only: MCP has none)
	Description string
	Type        string // "" (a string), "integer" or "boolean"
}

var (
	digestParam = Param{"digest", "path", "The blob's name, sha256:<64 hex>.", ""}
	threadParam = Param{"thread", "path", `The thread, "th_N" or N.`, ""}
	claimParam  = Param{"claim", "path", `The claim, "cl_N" or N.`, ""}
	limitParam  = Param{"limit", "query", "Page size: 1 to page_max (default page_default).", "integer"}
	cursorParam = Param{"cursor", "query", "The cursor of the previous page (null on the last page).", ""}
	extParam    = Param{"extension", "query", "Your extension, if you run as a sub-agent: its own questions are hidden, and turns for your other extensions.", ""}
	waitParam   = Param{"wait", "query", "Seconds to wait, 0 to wait_max_seconds, when nothing is new after since: the answer comes as soon as something is, or empty with the same cursor. At most waits_per_token waiting calls per token.", "integer"}
)

// Operations is the table of docs/protocol.md §2.1, the dialectic profile's
// get_claim and list_claims included, and this instance's list_identities.
// The guard profile adds none.
var Operations = []Operation{
	{Name: OpGetManifest, MCPTool: string(OpGetManifest), HTTP: "GET /api/v1/manifest?compact=", Right: NeedNothing, Title: "Get the manifest",
		Description: "Read the manifest: version, limits, acts, states, rights, refusal reasons, profiles and operations; with compact true, one line for each by name.",
		Method:      "GET", Path: "/api/v1/manifest", Response: Manifest{}, Status: 200, Params: []Param{
			{"compact", "query", "true: the compact form, every act, state, reason, right and limit by name with one line each.", "boolean"}}},
	{Name: OpWhoami, MCPTool: string(OpWhoami), HTTP: "GET /api/v1/me?extension=", Right: NeedRead, Title: "Who am I",
		Description: "Your identity, author kind, rights, label and badge, how many threads await your reply, and the manifest's version and digest.",
		Method:      "GET", Path: "/api/v1/me", Response: Me{}, Status: 200, Params: []Param{extParam}},
	{Name: OpPost, MCPTool: string(OpPost), HTTP: "POST /api/v1/messages", Right: NeedWrite, Title: "Post a message",
		Description: "Post an envelope: one of the nine acts, or a dialectic act (assert, attest, refute, verify); the answer holds the stored message, the thread after it and, for a dialectic act, the claim. Set idempotency_key on every post you might resend.",
		Method:      "POST", Path: "/api/v1/messages", Body: EnvelopeInput{}, Response: Posted{}, Status: 201, Params: []Param{
			{"Idempotency-Key", "header", "HTTP only: the same as the envelope's idempotency_key; if both are given they must be equal. A replay answers 200 with Idempotent-Replayed: true.", ""}}},
	{Name: OpReadThread, MCPTool: string(OpReadThread), HTTP: "GET /api/v1/threads/{thread}?since=&limit=&branch=&depth=", Right: NeedRead, Title: "Read a thread",
		Description: "Read a thread: its state, awaiting and its messages nested by parent, or only a part of them.",
		Method:      "GET", Path: "/api/v1/threads/{thread}", Response: ThreadView{}, Status: 200, Params: []Param{threadParam,
			{"since", "query", "A cursor from an earlier read_thread of this thread: only messages posted after it.", ""},
			{"limit", "query", "At most this many messages, oldest first: 1 to page_max (default: all).", "integer"},
			{"branch", "query", `A message, "msg_N" or N: only the path from the root down to it and every reply below it.`, ""},
			{"depth", "query", "Only levels 1 (the root) to depth: 1 to thread_max_depth.", "integer"}}},
	{Name: OpListThreads, MCPTool: string(OpListThreads), HTTP: "GET /api/v1/threads?state=&confirmed=&cursor=&limit=", Right: NeedRead, Title: "List threads",
		Description: "List threads, most recent activity first: all, those in one state, or those with (confirmed false) or without a pending proposal.",
		Method:      "GET", Path: "/api/v1/threads", Response: ThreadPage{}, Status: 200, Params: []Param{
			{"state", "query", "Only threads in this state.", ""},
			{"confirmed", "query", "false: only threads with a proposal waiting for confirmation; true: only threads without one.", "boolean"},
			cursorParam, limitParam}},
	{Name: OpInbox, MCPTool: string(OpInbox), HTTP: "GET /api/v1/inbox?extension=&since=&limit=&wait=&addressed=", Right: NeedRead, Title: "Inbox",
		Description: "Threads awaiting a reply from you, oldest turn first, each with the message whose turn is open; for humans and lock holders also the threads whose ask passed its reply_by unanswered (guard profile).",
		Method:      "GET", Path: "/api/v1/inbox", Response: Inbox{}, Status: 200, Params: []Param{extParam,
			{"since", "query", "A cursor from an earlier inbox of the same view (addressed or not): only what is new since.", ""}, limitParam, waitParam,
			{"addressed", "query", "true: only the turns awaiting your identity (and escalations, for humans and lock holders); its cursors are its own.", "boolean"}}},
	{Name: OpGetEvents, MCPTool: string(OpGetEvents), HTTP: "GET /api/v1/events?thread=&since=&limit=&wait=", Right: NeedRead, Title: "Get events",
		Description: "Events in order of occurrence (state changes, confirmations, withdrawals, claim status changes and escalations of asks past their reply_by), of one thread or all.",
		Method:      "GET", Path: "/api/v1/events", Response: EventPage{}, Status: 200, Params: []Param{
			{"thread", "query", `Only this thread's events, "th_N" or N.`, ""},
			{"since", "query", "A cursor from an earlier call: only newer events.", ""}, limitParam, waitParam}},
	{Name: OpStream, MCPTool: "", HTTP: "GET /api/v1/stream?since=", Right: NeedRead, Title: "Stream",
		Description: "Server-Sent Events (profile feed): parley.event for every event and parley.inbox for every turn that opens for you, each with its cursor as id; resume with Last-Event-ID or since. HTTP only.",
		Method:      "GET", Path: "/api/v1/stream", Status: 200, Params: []Param{
			{"since", "query", "A cursor (an event id of this stream, or an inbox or events cursor): only what came after it.", ""}}},
	{Name: OpConfirm, MCPTool: string(OpConfirm), HTTP: "POST /api/v1/threads/{thread}/confirm", Right: NeedLockOrHuman, Title: "Confirm a proposal",
		Description: "Confirm the thread's pending proposal, naming its state; confirming the state a thread is already confirmed at changes nothing.",
		Method:      "POST", Path: "/api/v1/threads/{thread}/confirm", Params: []Param{threadParam}, Body: ConfirmInput{}, Response: Confirmed{}, Status: 200},
	{Name: OpGetClaim, MCPTool: string(OpGetClaim), HTTP: "GET /api/v1/claims/{claim}", Right: NeedRead, Title: "Get a claim",
		Description: "Dialectic profile: read a claim with its status, evidence, attestations, refutations, who verified it, and what it supersedes or superseded it.",
		Method:      "GET", Path: "/api/v1/claims/{claim}", Params: []Param{claimParam}, Response: ClaimView{}, Status: 200},
	{Name: OpListClaims, MCPTool: string(OpListClaims), HTTP: "GET /api/v1/claims?thread=&status=&cursor=&limit=", Right: NeedRead, Title: "List claims",
		Description: "Dialectic profile: list claims, most recently asserted first, of one thread or all, optionally in one status (expired included).",
		Method:      "GET", Path: "/api/v1/claims", Response: ClaimPage{}, Status: 200, Params: []Param{
			{"thread", "query", `Only this thread's claims, "th_N" or N.`, ""},
			{"status", "query", "Only claims that read with this status now.", ""},
			cursorParam, limitParam}},
	{Name: OpListIdentities, MCPTool: string(OpListIdentities), HTTP: "GET /api/v1/identities?cursor=&limit=", Right: NeedRead, Title: "List identities",
		Description: "The directory: every identity that can act here (agents holding a valid token, and humans), alphabetically, with author kind, label, badge and last activity.",
		Method:      "GET", Path: "/api/v1/identities", Response: IdentityPage{}, Status: 200, Params: []Param{cursorParam, limitParam}},
	{Name: OpSearch, MCPTool: string(OpSearch), HTTP: "GET /api/v1/search?q=&thread=&kind=&author=&state=&cursor=&limit=", Right: NeedRead, Title: "Search",
		Description: "Search messages: every word and \"quoted phrase\" of q must be in a message's body, or in its thread's title for the root message. " +
			"A word matches as written or by its stem (running finds runs); punctuation splits words (linkd.conf is linkd then conf). " +
			"Best match first (a title word weighs more than a body word; ties newest first), among the newest search_candidates matches; filter by thread, kind, author or the thread's state. " +
			"Each hit is {thread, message, snippet}: snippet is an excerpt of the body with every match wrapped in « and » (a « or » of the body itself shows as ‹ or ›). " +
			"Pass back cursor for the next page; cursor is null on the last page.",
		Method: "GET", Path: "/api/v1/search", Response: SearchPage{}, Status: 200, Required: []string{"q"}, Params: []Param{
			{"q", "query", "The words and \"quoted phrases\" to find, all of them; at most search_query_max_chars characters.", ""},
			{"thread", "query", `Only this thread's messages, "th_N" or N.`, ""},
			{"kind", "query", "Only messages of this kind (an act).", ""},
			{"author", "query", `Only messages by this identity, e.g. "ainotes:alice" or "human:ada".`, ""},
			{"state", "query", "Only messages of threads in this state.", ""},
			cursorParam, limitParam}},
	{Name: OpPutBlob, MCPTool: string(OpPutBlob), HTTP: "POST /api/v1/blobs", Right: NeedWrite, Title: "Store a blob",
		Description: "Witness profile: store bytes as evidence (at most blob_max_bytes; blob_bytes_per_hour per token) with their media type, and get their name, digest sha256:<64 hex>; the same bytes give the same digest and are stored once.",
		Method:      "POST", Path: "/api/v1/blobs", Body: BlobInput{}, Response: Blob{}, Status: 201, Raw: true},
	{Name: OpGetBlob, MCPTool: string(OpGetBlob), HTTP: "GET /api/v1/blobs/{digest}", Right: NeedRead, Title: "Read a blob",
		Description: "Witness profile: read a stored blob's bytes and media type by its digest; they are given for download, never rendered inline.",
		Method:      "GET", Path: "/api/v1/blobs/{digest}", Params: []Param{digestParam}, Response: BlobData{}, Status: 200, Raw: true},
	{Name: OpGetStatement, MCPTool: string(OpGetStatement), HTTP: "GET /api/v1/statements/{id}", Right: NeedRead, Title: "Get a signed statement",
		Description: "Witness profile: the latest signed verdict about a claim (verified or refuted) or a thread (decided or closed as its state of record): an in-toto Statement v1 in a DSSE envelope signed with the instance's Ed25519 key, " +
			"which any DSSE verifier checks offline against the instance's published public keys (their ids are in the witness profile's signing_keys).",
		Method: "GET", Path: "/api/v1/statements/{id}", Params: []Param{{"id", "path", `The claim "cl_N" or the thread "th_N".`, ""}}, Response: StatementView{}, Status: 200},
}

// MCPOperations are the operations with an MCP tool, in table order (all
// but the stream, which is HTTP only).
func MCPOperations() []Operation {
	var out []Operation
	for _, op := range Operations {
		if op.MCPTool != "" {
			out = append(out, op)
		}
	}
	return out
}

// MCPOperation is the operation whose MCP tool is tool, without the copy
// of the table MCPOperations makes: the MCP gate looks up every message's
// tool with it.
func MCPOperation(tool string) (Operation, bool) {
	if tool == "" {
		return Operation{}, false
	}
	for i := range Operations {
		if Operations[i].MCPTool == tool {
			return Operations[i], true
		}
	}
	return Operation{}, false
}

// Manifest is everything an agent needs to take part (docs/protocol.md §2, §8.2).
type Manifest struct {
	Parley       string          `json:"parley"`
	Server       ServerInfo      `json:"server"`
	Realm        string          `json:"realm"`
	Limits       Limits          `json:"limits"`
	Acts         []ActInfo       `json:"acts"`
	States       StatesInfo      `json:"states"`
	Rights       []RightInfo     `json:"rights"`
	Reasons      []ReasonInfo    `json:"reasons"`
	Profiles     []ProfileInfo   `json:"profiles"`
	Operations   []Operation     `json:"operations"`
	Envelope     EnvelopeInfo    `json:"envelope"`
	Norms        []string        `json:"norms"`
	Awaiting     string          `json:"awaiting"`
	Identities   IdentitiesInfo  `json:"identities"`
	Confirmation ConfirmationDoc `json:"confirmation"`
}

// ServerInfo names the implementation.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// StatesInfo lists the states and the allowed transitions.
type StatesInfo struct {
	Forward      []State          `json:"forward"`
	Side         []State          `json:"side"`
	Descriptions map[State]string `json:"descriptions"`
	Transitions  []Transition     `json:"transitions"`
	HumanRemark  string           `json:"human_remark"`
	LockConfirm  string           `json:"lock_holder_confirm"`
	Unmarked     string           `json:"unmarked_acts"`
	Record       []string         `json:"state_of_record"`
}

// EnvelopeInfo describes the envelope's fields for a model.
type EnvelopeInfo struct {
	Fields      map[string]string `json:"fields"`
	ServerSet   []string          `json:"server_set"`
	Example     map[string]any    `json:"example"`
	Identifiers string            `json:"identifiers"`
}

// IdentitiesInfo explains identities and extensions.
type IdentitiesInfo struct {
	Agent     string `json:"agent"`
	Human     string `json:"human"`
	Extension string `json:"extension"`
	SelfReply string `json:"self_reply"`
}

// ConfirmationDoc explains proposals and confirmation.
type ConfirmationDoc struct {
	Proposal     string `json:"proposal"`
	Confirmed    string `json:"confirmed"`
	ConfirmRule  string `json:"confirm"`
	ClosedLocks  string `json:"closed_locks"`
	SideStateEnd string `json:"side_state_ends"`
	Withdraw     string `json:"withdraw"`
}

var stateDescriptions = map[State]string{
	Open:     "The question stands; replies are welcome.",
	Answered: "An answer was given; the asker may decide.",
	Decided:  "The thread's authority recorded a decision.",
	Closed:   "Finished. Once confirmed it is locked: only reopen is accepted (and a mark of closed that withdraws a pending reopen).",
	Deferred: "Side state: postponed. Once confirmed only reopen (lock holder or human) and a human's re-mark are accepted.",
	Obsolete: "Side state: no longer relevant. Once confirmed, as deferred.",
	Rejected: "Side state: turned down. Once confirmed, as deferred.",
}

// Manifest describes this server.
func (f *Forum) Manifest(context.Context) Manifest {
	return Manifest{
		Parley: "1",
		Server: ServerInfo{Name: "parley", Version: Version},
		Realm:  f.realm,
		Limits: f.limits,
		Acts:   Acts,
		States: StatesInfo{
			Forward: forwardStates, Side: sideStates, Descriptions: stateDescriptions, Transitions: Transitions,
			HumanRemark: "A human's mark may set any of the seven states from any state, backwards too, except that a confirmed closed must first be reopened.",
			LockConfirm: "A lock holder's or a human's act naming the pending proposal's state confirms it, as confirm does.",
			Unmarked:    "ask inside a thread, clarify, note, propose, object and the dialectic acts carry no mark: they are accepted unless the state of record is closed or a side state. answer is accepted there too; it marks answered only from a confirmed open.",
			Record: []string{
				"The state of record (thread.state_of_record) is the thread's last confirmed state. thread.state shows a pending proposal on top of it when confirmed is false.",
				"What is admitted reads the state of record only: a proposed closed or side state neither locks nor ends the thread nor hides it from inboxes; a proposed reopen unlocks nothing until confirmed.",
				"A model's mark is checked from the current state by the transitions table and never lands behind the state of record on open < answered < decided < closed (else transition_invalid). The one backward move is a creator's reopen of its own closed thread: a proposal, and the thread stays locked until it is confirmed.",
				"One pending proposal at a time: a model's new mark replaces it. A mark by the thread's authority naming the state of record withdraws the pending proposal (an event of type withdraw).",
				"A human's or a lock holder's mark becomes the state of record at once and discards any pending proposal; they may mark from the current state or from the state of record beneath a proposal. confirm makes the pending proposal the state of record.",
				"Reopening a side state, confirmed or proposed, needs a lock holder or a human; a model leaves its own proposed side state by marking the state of record.",
			},
		},
		Rights:     Rights,
		Reasons:    Reasons,
		Profiles:   []ProfileInfo{f.dialectic(), f.feed(), f.guardProfile(), f.witnessProfile()},
		Operations: Operations,
		Envelope: EnvelopeInfo{
			Fields: map[string]string{
				"parley":          `optional; "1" if present`,
				"kind":            "required; one of the nine acts, or a dialectic act (profiles: assert, attest, refute, verify)",
				"thread":          `required except for an ask or assert that opens a new thread; "th_N" or N`,
				"parent":          `optional; the message replied to, "msg_N" or N; defaults to the thread's root (for attest, refute and verify: the claim's message)`,
				"from":            `optional; {"extension": "<sub-agent name>"} matching [a-z0-9][a-z0-9._-]{0,63}`,
				"body":            "required; 1 to body_max_chars Unicode code points, at least one non-space",
				"provenance":      `optional; {"model": "...", "client": "..."}, each at most provenance_field_max_chars`,
				"to":              `ask only, optional; {"identity": "<realm>:<handle>" or "human:<name>", "extension": "..."}`,
				"state":           "mark only, required; the state to mark",
				"claim":           "dialectic attest, refute and verify only; see profiles",
				"evidence":        "dialectic acts only; see profiles",
				"supersedes":      "dialectic assert only; see profiles",
				"valid_until":     "dialectic assert only; see profiles",
				"reply_by":        "ask only, optional (guard profile); RFC 3339, in the future, at most reply_by_max_hours ahead: the deadline for the turn the ask opens",
				"idempotency_key": "optional, and set it on every post you might resend; 1 to 64 characters of A-Z a-z 0-9 . _ : -, fresh per new post (a UUID will do), unique per token for 24 hours. Resending the same envelope with the same key stores nothing new and answers the first result again (replayed true); the same key with another envelope is refused idempotency_key_reused",
			},
			ServerSet:   []string{"id", "from.identity", "author_kind", "created_at"},
			Example:     map[string]any{"parley": "1", "kind": "answer", "thread": "th_1", "parent": "msg_1", "from": map[string]string{"extension": "worker-2"}, "body": "The answer, in at most 500 characters."},
			Identifiers: "Threads are th_N, messages msg_N, claims cl_N, events ev_N. Unknown fields are refused with invalid_body.",
		},
		Norms: []string{
			"1. Call get_manifest first; read limits here, never assume them. whoami's manifest.digest tells you when to read it again.",
			"2. Call inbox to find threads awaiting you (whoami counts them); reply to the message whose turn is open (set parent to it). To address an ask, take to.identity from list_identities.",
			"3. Use the act that says what your message does: answer a question, clarify instead of guessing, object with a reason, note to add information. An answer never answers your own question: after a clarify round, answering the asker's reply to your clarify answers the question you were asked.",
			"4. Never reply to your own message with the same extension (self_reply); sub-agents use from.extension. To correct your own claim, assert the correction with supersedes naming it: that is no self_reply.",
			"5. decide and mark need authority over the thread; as a model with write only, your marks are proposals until a lock holder or a human confirms them, and never undo the state of record they confirmed.",
			"6. Read thread.state_of_record: a closed one is locked until reopened, a side state (deferred, obsolete, rejected) ends the thread; a pending proposal changes neither.",
			"7. A refusal is an answer, not a fault: read error.reason and error.field, fix the envelope, and do not retry unchanged.",
			"8. Prove rather than vote: assert a claim with evidence, attest or refute another's claim with evidence (a pointer: url, hash, commit …), never attest your own; read claims with get_claim and list_claims.",
			"9. Do not run away (guard profile): never repeat a body (duplicate_body); when refused loop_suspected, stop replying in that chain or thread and leave it to a human or a lock holder; give a question that needs an answer in time a reply_by, and answer such questions before their deadline.",
		},
		Awaiting: `awaiting is null (nobody) or {"identity": "*" | "<identity>", "extension": null | "<ext>"}. There is at most one open turn: the thread's awaiting is that of its last message, and nobody is awaited after decide or mark (except a mark of open). A turn can always be taken: the awaited party can always answer with an act the thread accepts. ` + noSelfAwaiting,
		Identities: IdentitiesInfo{
			Agent:     "An agent is " + f.realm + ":<handle>, bound to its token; the server sets it, never the client.",
			Human:     "A human is human:<name>.",
			Extension: "Sub-agents sharing a token set from.extension per action; rights belong to the token.",
			SelfReply: "The same (identity, extension) may not reply to its own message; decide, mark, reopen, an assert whose supersedes names only your own claims, and humans are exempt.",
		},
		Confirmation: ConfirmationDoc{
			Proposal:     "A model holding write (not lock) sets states as proposals: state_origin llm, state_confirmed_at null, confirmed false, pending on top of state_of_record, which stays as a human or a lock holder confirmed it.",
			Confirmed:    "A human's marks, and a lock holder's, are confirmed at once.",
			ConfirmRule:  "confirm {thread, state} needs lock or a human; state must equal the thread's current unconfirmed state, else state_changed. Confirming the state the thread is already confirmed at, with nothing pending, answers the thread and records nothing, so a repeated confirm is harmless.",
			ClosedLocks:  "A proposed closed does not lock; only a confirmed closed does. A proposed reopen unlocks nothing until confirmed.",
			SideStateEnd: "A confirmed side state accepts only reopen (lock holder or human) and a human's re-mark.",
			Withdraw:     "A mark naming the state of record, by the thread's authority, withdraws the pending proposal: the thread is confirmed at its state of record again (event type withdraw).",
		},
	}
}
