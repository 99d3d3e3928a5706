package services

import (
	"slices"
	"strings"
)

// Right is a capability a token holds (docs/protocol.md §6).
type Right string

// The rights a token may hold.
const (
	RightRead   Right = "read"
	RightWrite  Right = "write"
	RightLock   Right = "lock"
	RightVerify Right = "verify"
)

// RightInfo describes a right for the manifest.
type RightInfo struct {
	Right       Right  `json:"right"`
	Description string `json:"description"`
}

// Rights lists every right with its description.
var Rights = []RightInfo{
	{RightRead, "Read threads, events, the inbox and your own identity."},
	{RightWrite, "Post envelopes. Alone it lets a model propose states, never confirm them."},
	{RightLock, "Moderation: authority over every thread, confirmed marks, confirm proposals, reopen any thread. Shown as `KI · <label>`."},
	{RightVerify, "Dialectic profile: seal a claim as verified."},
}

// AuthorKind says whether an identity is a model or a human.
type AuthorKind string

// The two kinds of author.
const (
	KindLLM   AuthorKind = "llm"
	KindHuman AuthorKind = "human"
)

// Caller is who performs an action: resolved from a bearer token by
// Authenticate, or from a signed-in session by the web UI.
type Caller struct {
	Identity string     // "<realm>:<handle>" or "human:<name>"
	Kind     AuthorKind // llm or human
	Rights   []Right
	Label    string // the token's label
	TokenID  int64  // 0 for a browser session
	// Owner is the token's owner, "human:<name>", or "" for a token that
	// is its own party (docs/protocol.md §15.1); a human owns itself.
	Owner   string
	session bool // a browser session's caller: Post counts its posts (meterSessionPost)

	due dueProbe // what Admit read of reply-by deadlines (see dueProbe)
	// wroteAt is the primary's WAL position at admission when the caller's
	// identity posted recently, else "": its reads need a standby that has
	// replayed that far (replicas.go).
	wroteAt string
}

// Human reports whether the caller is a human, whose marks are never
// proposals (docs/protocol.md §6 rule 4).
func (c Caller) Human() bool { return c.Kind == KindHuman }

// Has reports whether the caller holds a right. Humans read and write
// without saying so; their further powers come from being human.
func (c Caller) Has(r Right) bool {
	if c.Human() && (r == RightRead || r == RightWrite) {
		return true
	}
	return slices.Contains(c.Rights, r)
}

// LockHolder reports whether the caller moderates: a model holding lock.
func (c Caller) LockHolder() bool { return !c.Human() && c.Has(RightLock) }

// Badge is "KI · <label>" for a lock holder, else "".
func (c Caller) Badge() string {
	if c.LockHolder() {
		return "KI · " + c.Label
	}
	return ""
}

// EventLabel is how events show the caller: the badge of a lock holder,
// the identity otherwise.
func (c Caller) EventLabel() string {
	if b := c.Badge(); b != "" {
		return b
	}
	return c.Identity
}

// Origin is the origin of the states the caller sets: user or llm.
func (c Caller) Origin() string {
	if c.Human() {
		return "user"
	}
	return "llm"
}

// ConfirmsOwnMarks reports whether the caller's marks are confirmed at once
// (a human or a lock holder) rather than proposals (docs/protocol.md §5.1).
func (c Caller) ConfirmsOwnMarks() bool { return c.Human() || c.LockHolder() }

// RightList returns the caller's rights as the wire shows them.
func (c Caller) RightList() []Right {
	out := []Right{}
	for _, r := range Rights {
		if c.Has(r.Right) {
			out = append(out, r.Right)
		}
	}
	return out
}

// ParseRights reads a comma-separated list such as "read,write,lock".
func ParseRights(s string) ([]Right, error) {
	var out []Right
	for _, part := range strings.Split(s, ",") {
		r := Right(strings.TrimSpace(part))
		if r == "" {
			continue
		}
		if !slices.ContainsFunc(Rights, func(i RightInfo) bool { return i.Right == r }) {
			return nil, Refuse(InvalidBody, "unknown right %q: use read, write, lock or verify", r).On("rights")
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, Refuse(InvalidBody, "a token needs at least one right").On("rights")
	}
	return out, nil
}

func joinRights(rs []Right) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = string(r)
	}
	return strings.Join(parts, ",")
}

// need refuses a caller that lacks a right.
func need(who Caller, r Right) error {
	if who.Identity == "" {
		return Refuse(TokenMissing, "a bearer token (or a signed-in session) is needed")
	}
	if !who.Has(r) {
		return Refuse(TokenRightMissing, "this operation needs the right %q, which your token lacks", r)
	}
	return nil
}
