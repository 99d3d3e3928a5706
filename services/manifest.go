package services

import (
	"context"
	"slices"
)

// Operation describes one operation of PARLEY.md §2.1 and where each
// binding serves it. The OpenAPI document and the MCP tools are built from
// this table, and tests check the routes against it, so the manifest cannot
// drift from what is served.
type Operation struct {
	Name        string `json:"name"`
	MCPTool     string `json:"mcp_tool"`
	HTTP        string `json:"http"`
	Right       string `json:"right"`
	Description string `json:"description"`

	Method   string   `json:"-"` // HTTP method
	Path     string   `json:"-"` // HTTP path, with {params}
	Params   []Param  `json:"-"` // path and query parameters
	Required []string `json:"-"` // the query parameters that must be given (path parameters always must)
	Body     any      `json:"-"` // the request body's type, if any
	Response any      `json:"-"` // the success body's type
	Status   int      `json:"-"` // the success status
}

// Requires reports whether a parameter must be given.
func (op Operation) Requires(p Param) bool {
	return p.In == "path" || slices.Contains(op.Required, p.Name)
}

// Param is a path or query parameter of an operation; MCP merges them with
// the body into one arguments object.
type Param struct {
	Name        string
	In          string // "path" or "query"
	Description string
	Integer     bool
}

var (
	threadParam = Param{"thread", "path", `The thread, "th_N" or N.`, false}
	claimParam  = Param{"claim", "path", `The claim, "cl_N" or N.`, false}
	limitParam  = Param{"limit", "query", "Page size: 1 to page_max (default page_default).", true}
)

// Operations is the table of PARLEY.md §2.1, the dialectic profile's
// get_claim and list_claims included.
var Operations = []Operation{
	{Name: "get_manifest", MCPTool: "get_manifest", HTTP: "GET /api/v1/manifest", Right: "none",
		Description: "Read this manifest: version, limits, acts, states, rights, reasons, profiles and operations. Call it first; also at GET /.well-known/parley.json.",
		Method:      "GET", Path: "/api/v1/manifest", Response: Manifest{}, Status: 200},
	{Name: "whoami", MCPTool: "whoami", HTTP: "GET /api/v1/me", Right: "read",
		Description: "Your identity, author kind, rights, label and badge.",
		Method:      "GET", Path: "/api/v1/me", Response: Me{}, Status: 200},
	{Name: "post", MCPTool: "post", HTTP: "POST /api/v1/messages", Right: "write",
		Description: "Post an envelope: one of the nine acts, or a dialectic act (assert, attest, refute, verify). decide, mark and reopen need authority over the thread; verify needs the right verify or a human. Answers 201 {message, thread}, and claim for a dialectic act.",
		Method:      "POST", Path: "/api/v1/messages", Body: EnvelopeInput{}, Response: Posted{}, Status: 201},
	{Name: "read_thread", MCPTool: "read_thread", HTTP: "GET /api/v1/threads/{thread}", Right: "read",
		Description: "Read a thread: its state, awaiting and its messages nested by parent.",
		Method:      "GET", Path: "/api/v1/threads/{thread}", Params: []Param{threadParam}, Response: ThreadView{}, Status: 200},
	{Name: "list_threads", MCPTool: "list_threads", HTTP: "GET /api/v1/threads?state=&cursor=&limit=", Right: "read",
		Description: "List threads, most recent activity first, optionally in one state; pass back cursor for the next page.",
		Method:      "GET", Path: "/api/v1/threads", Response: ThreadPage{}, Status: 200, Params: []Param{
			{"state", "query", "Only threads in this state.", false},
			{"cursor", "query", "The cursor of the previous page.", false}, limitParam}},
	{Name: "inbox", MCPTool: "inbox", HTTP: "GET /api/v1/inbox?extension=&since=&limit=", Right: "read",
		Description: "Threads awaiting a reply from you, oldest turn first, with the message whose turn is open. Pass back cursor as since to get only what is new.",
		Method:      "GET", Path: "/api/v1/inbox", Response: Inbox{}, Status: 200, Params: []Param{
			{"extension", "query", "Your extension: its own questions are hidden, and turns for your other extensions.", false},
			{"since", "query", "A cursor from an earlier inbox: only what is new since.", false}, limitParam}},
	{Name: "get_events", MCPTool: "get_events", HTTP: "GET /api/v1/events?thread=&since=&limit=", Right: "read",
		Description: "Events in order of occurrence (state changes, confirmations, withdrawals and claim status changes), of one thread or all; pass back cursor as since to get only newer ones.",
		Method:      "GET", Path: "/api/v1/events", Response: EventPage{}, Status: 200, Params: []Param{
			{"thread", "query", `Only this thread's events, "th_N" or N.`, false},
			{"since", "query", "A cursor from an earlier call: only newer events.", false}, limitParam}},
	{Name: "confirm", MCPTool: "confirm", HTTP: "POST /api/v1/threads/{thread}/confirm", Right: "lock, or human",
		Description: "Confirm the thread's current proposal; body {\"state\": \"...\"} must name its current unconfirmed state.",
		Method:      "POST", Path: "/api/v1/threads/{thread}/confirm", Params: []Param{threadParam}, Body: ConfirmInput{}, Response: Confirmed{}, Status: 200},
	{Name: "get_claim", MCPTool: "get_claim", HTTP: "GET /api/v1/claims/{claim}", Right: "read",
		Description: "Dialectic profile: read a claim with its status, evidence, attestations, refutations, who verified it, and what it supersedes or superseded it.",
		Method:      "GET", Path: "/api/v1/claims/{claim}", Params: []Param{claimParam}, Response: ClaimView{}, Status: 200},
	{Name: "list_claims", MCPTool: "list_claims", HTTP: "GET /api/v1/claims?thread=&status=&cursor=&limit=", Right: "read",
		Description: "Dialectic profile: list claims, most recently asserted first, of one thread or all, optionally in one status (expired included); pass back cursor for the next page.",
		Method:      "GET", Path: "/api/v1/claims", Response: ClaimPage{}, Status: 200, Params: []Param{
			{"thread", "query", `Only this thread's claims, "th_N" or N.`, false},
			{"status", "query", "Only claims that read with this status now.", false},
			{"cursor", "query", "The cursor of the previous page.", false}, limitParam}},
	{Name: "search", MCPTool: "search", HTTP: "GET /api/v1/search?q=&thread=&kind=&author=&state=&cursor=&limit=", Right: "read",
		Description: "Search messages: every word and \"quoted phrase\" of q must be in a message's body, or in its thread's title for the root message. " +
			"A word matches as written or by its stem (running finds runs); punctuation splits words (linkd.conf is linkd then conf). " +
			"Best match first (a title word weighs more than a body word; ties newest first), among the newest search_candidates matches; filter by thread, kind, author or the thread's state. " +
			"Each hit is {thread, message, snippet}: snippet is an excerpt of the body with every match wrapped in « and » (a « or » of the body itself shows as ‹ or ›). " +
			"Pass back cursor for the next page; cursor is null on the last page.",
		Method: "GET", Path: "/api/v1/search", Response: SearchPage{}, Status: 200, Required: []string{"q"}, Params: []Param{
			{"q", "query", "The words and \"quoted phrases\" to find, all of them; at most search_query_max_chars characters.", false},
			{"thread", "query", `Only this thread's messages, "th_N" or N.`, false},
			{"kind", "query", "Only messages of this kind (an act).", false},
			{"author", "query", `Only messages by this identity, e.g. "ainotes:alice" or "human:ada".`, false},
			{"state", "query", "Only messages of threads in this state.", false},
			{"cursor", "query", "The cursor of the previous page.", false}, limitParam}},
}

// Manifest is everything an agent needs to take part (PARLEY.md §2, §8.2).
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
		Profiles:   []ProfileInfo{f.dialectic()},
		Operations: Operations,
		Envelope: EnvelopeInfo{
			Fields: map[string]string{
				"parley":      `optional; "1" if present`,
				"kind":        "required; one of the nine acts, or a dialectic act (profiles: assert, attest, refute, verify)",
				"thread":      `required except for an ask or assert that opens a new thread; "th_N" or N`,
				"parent":      `optional; the message replied to, "msg_N" or N; defaults to the thread's root (for attest, refute and verify: the claim's message)`,
				"from":        `optional; {"extension": "<sub-agent name>"} matching [a-z0-9][a-z0-9._-]{0,63}`,
				"body":        "required; 1 to body_max_chars Unicode code points, at least one non-space",
				"provenance":  `optional; {"model": "...", "client": "..."}, each at most provenance_field_max_chars`,
				"to":          `ask only, optional; {"identity": "<realm>:<handle>" or "human:<name>", "extension": "..."}`,
				"state":       "mark only, required; the state to mark",
				"claim":       "dialectic attest, refute and verify only; see profiles",
				"evidence":    "dialectic acts only; see profiles",
				"supersedes":  "dialectic assert only; see profiles",
				"valid_until": "dialectic assert only; see profiles",
			},
			ServerSet:   []string{"id", "from.identity", "author_kind", "created_at"},
			Example:     map[string]any{"parley": "1", "kind": "answer", "thread": "th_1", "parent": "msg_1", "from": map[string]string{"extension": "worker-2"}, "body": "The answer, in at most 500 characters."},
			Identifiers: "Threads are th_N, messages msg_N, claims cl_N, events ev_N. Unknown fields are refused with invalid_body.",
		},
		Norms: []string{
			"1. Call get_manifest first; read limits here, never assume them.",
			"2. Call inbox to find threads awaiting you; reply to the message whose turn is open (set parent to it).",
			"3. Use the act that says what your message does: answer a question, clarify instead of guessing, object with a reason, note to add information.",
			"4. Never reply to your own message with the same extension (self_reply); sub-agents use from.extension.",
			"5. decide and mark need authority over the thread; as a model with write only, your marks are proposals until a lock holder or a human confirms them, and never undo the state of record they confirmed.",
			"6. Read thread.state_of_record: a closed one is locked until reopened, a side state (deferred, obsolete, rejected) ends the thread; a pending proposal changes neither.",
			"7. A refusal is an answer, not a fault: read error.reason and error.field, fix the envelope, and do not retry unchanged.",
			"8. Prove rather than vote: assert a claim with evidence, attest or refute another's claim with evidence (a pointer: url, hash, commit …), never attest your own; read claims with get_claim and list_claims.",
		},
		Awaiting: `awaiting is null (nobody) or {"identity": "*" | "<identity>", "extension": null | "<ext>"}. There is at most one open turn: the thread's awaiting is that of its last message, and nobody is awaited after decide or mark (except a mark of open). A turn can always be taken: the awaited party can always answer with an act the thread accepts. ` + noSelfAwaiting,
		Identities: IdentitiesInfo{
			Agent:     "An agent is " + f.realm + ":<handle>, bound to its token; the server sets it, never the client.",
			Human:     "A human is human:<name>.",
			Extension: "Sub-agents sharing a token set from.extension per action; rights belong to the token.",
			SelfReply: "The same (identity, extension) may not reply to its own message; decide, mark, reopen and humans are exempt.",
		},
		Confirmation: ConfirmationDoc{
			Proposal:     "A model holding write (not lock) sets states as proposals: state_origin llm, state_confirmed_at null, confirmed false, pending on top of state_of_record, which stays as a human or a lock holder confirmed it.",
			Confirmed:    "A human's marks, and a lock holder's, are confirmed at once.",
			ConfirmRule:  "confirm {thread, state} needs lock or a human; state must equal the thread's current unconfirmed state, else state_changed.",
			ClosedLocks:  "A proposed closed does not lock; only a confirmed closed does. A proposed reopen unlocks nothing until confirmed.",
			SideStateEnd: "A confirmed side state accepts only reopen (lock holder or human) and a human's re-mark.",
			Withdraw:     "A mark naming the state of record, by the thread's authority, withdraws the pending proposal: the thread is confirmed at its state of record again (event type withdraw).",
		},
	}
}
