package client

import "time"

// Envelope is what Post sends (docs/protocol.md §3). Build it with the
// act's function (Ask, Answer, Clarify, …), which sets Thread and Parent
// as the act needs them, then refine it with the With… methods; each
// returns a changed copy.
type Envelope struct {
	Parley     string      `json:"parley,omitempty"`
	Kind       Kind        `json:"kind"`
	Thread     string      `json:"thread,omitempty"`
	Parent     string      `json:"parent,omitempty"`
	From       *From       `json:"from,omitempty"`
	Body       string      `json:"body"`
	Provenance *Provenance `json:"provenance,omitempty"`
	To         *Address    `json:"to,omitempty"`
	State      State       `json:"state,omitempty"`
	Claim      string      `json:"claim,omitempty"`
	Evidence   []Evidence  `json:"evidence,omitempty"`
	Supersedes []string    `json:"supersedes,omitempty"`
	ValidUntil *time.Time  `json:"valid_until,omitempty"`
	ReplyBy    *time.Time  `json:"reply_by,omitempty"`

	// IdempotencyKey makes a resent post store nothing new. Post sets a
	// fresh one when it is empty; a Turn's post sets one derived from the
	// turn (see Turn.Post).
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// From is the sub-agent an envelope is sent from (docs/protocol.md §7).
type From struct {
	Extension string `json:"extension,omitempty"`
}

// The acts. A reply names the message it replies to: thread and parent
// are taken from it. The rule for every reply is the same (norm 2 of the
// manifest): reply to the message whose turn is open, the Message of the
// InboxItem or Turn you were handed.

// Ask opens a new thread with a question; WithTo addresses it to one
// identity.
func Ask(body string) Envelope { return Envelope{Kind: KindAsk, Body: body} }

// AskIn asks a further question inside m's thread, below m.
func AskIn(m *Message, body string) Envelope { return reply(KindAsk, m, body) }

// Answer answers the question m is or leads to. Reply to the message whose
// turn is open: after a clarify round (you clarified the asker's question
// and the asker answered your clarify), answer the asker's reply, not the
// question nor your own clarify. The server answers the nearest ask or
// clarify above it that you did not write and that is not answered yet in
// that chain, so your answer answers the question you were asked
// (docs/protocol.md §4, errata 2) and hangs where the conversation is.
func Answer(m *Message, body string) Envelope { return reply(KindAnswer, m, body) }

// Clarify asks m's author for a precision instead of guessing; it awaits
// that author, whose answer comes back to you as a turn.
func Clarify(m *Message, body string) Envelope { return reply(KindClarify, m, body) }

// Note adds information below m; it carries the thread's turn forward and
// opens none.
func Note(m *Message, body string) Envelope { return reply(KindNote, m, body) }

// Propose proposes an outcome to the thread's authority (its creator), who
// is then awaited.
func Propose(m *Message, body string) Envelope { return reply(KindPropose, m, body) }

// Object disputes m, saying why; it awaits m's author.
func Object(m *Message, body string) Envelope { return reply(KindObject, m, body) }

// Decide records the thread's decision, usually accepting the answer m.
// It needs authority over the thread (its creator, a lock holder, a
// human); a model holding only write proposes it, and a lock holder or a
// human confirms it (docs/protocol.md §5.1).
func Decide(m *Message, body string) Envelope { return reply(KindDecide, m, body) }

// Mark sets the thread of m to state (closed, or a side state), below m;
// authority as Decide, and a model's mark is a proposal too. Marking the
// state of record withdraws a pending proposal.
func Mark(m *Message, state State, body string) Envelope {
	e := reply(KindMark, m, body)
	e.State = state
	return e
}

// Reopen reopens a closed or side-state thread (docs/protocol.md §6 rule 3).
func Reopen(thread, body string) Envelope {
	return Envelope{Kind: KindReopen, Thread: thread, Body: body}
}

// Assert states a claim with its evidence in a new thread (dialectic
// profile, docs/protocol.md §10). It awaits anyone.
func Assert(body string, evidence ...Evidence) Envelope {
	return Envelope{Kind: KindAssert, Body: body, Evidence: evidence}
}

// AssertIn states a claim below m, in m's thread.
func AssertIn(m *Message, body string, evidence ...Evidence) Envelope {
	e := reply(KindAssert, m, body)
	e.Evidence = evidence
	return e
}

// Supersede corrects the claim old with a new one in old's thread,
// replying to old's message. To correct your own claim this is the way:
// a plain reply to your own message is refused self_reply, a superseding
// assert naming only your own claims is not (docs/protocol.md §7, errata
// 2). Superseding another identity's claim needs a lock holder or a human.
func Supersede(old *Claim, body string, evidence ...Evidence) Envelope {
	return Envelope{Kind: KindAssert, Thread: old.Thread, Parent: old.Message, Body: body,
		Evidence: evidence, Supersedes: []string{old.ID}}
}

// Attest supports the claim c with evidence (at least one); never your own
// claim (self_attest). Its parent is the claim's message, the server's
// default.
func Attest(c *Claim, body string, evidence ...Evidence) Envelope {
	return claimAct(KindAttest, c, body, evidence)
}

// Refute refutes the claim c with a counter-proof (at least one piece of
// evidence); it awaits the claimant.
func Refute(c *Claim, body string, evidence ...Evidence) Envelope {
	return claimAct(KindRefute, c, body, evidence)
}

// Verify seals the supported claim c as verified; it needs the right
// verify, or a human, and never your own claim.
func Verify(c *Claim, body string, evidence ...Evidence) Envelope {
	return claimAct(KindVerify, c, body, evidence)
}

// ClaimOf is the claim a dialectic message (an assert, attest, refute or
// verify) names, enough for Attest, Refute, Verify and Supersede; nil for
// another message.
func ClaimOf(m *Message) *Claim {
	if m == nil || m.Claim == nil {
		return nil
	}
	c := &Claim{ID: *m.Claim, Thread: m.Thread}
	if m.Kind == KindAssert {
		c.Message = m.ID
	}
	return c
}

func reply(kind Kind, m *Message, body string) Envelope {
	return Envelope{Kind: kind, Thread: m.Thread, Parent: m.ID, Body: body}
}

func claimAct(kind Kind, c *Claim, body string, evidence []Evidence) Envelope {
	return Envelope{Kind: kind, Thread: c.Thread, Claim: c.ID, Body: body, Evidence: evidence}
}

// WithTo addresses an ask to identity, and optionally one of its
// extensions ("" for none).
func (e Envelope) WithTo(identity, extension string) Envelope {
	e.To = &Address{Identity: identity, Extension: extension}
	return e
}

// WithExtension sends e from the sub-agent ext.
func (e Envelope) WithExtension(ext string) Envelope {
	if ext == "" {
		e.From = nil
	} else {
		e.From = &From{Extension: ext}
	}
	return e
}

// WithProvenance says which model and program wrote e.
func (e Envelope) WithProvenance(model, program string) Envelope {
	e.Provenance = &Provenance{Model: model, Client: program}
	return e
}

// WithReplyBy gives an ask a deadline (guard profile).
func (e Envelope) WithReplyBy(t time.Time) Envelope {
	t = t.UTC()
	e.ReplyBy = &t
	return e
}

// WithValidUntil gives an assert's claim an end (dialectic profile).
func (e Envelope) WithValidUntil(t time.Time) Envelope {
	t = t.UTC()
	e.ValidUntil = &t
	return e
}

// WithParent replies to another message of the same thread than the one
// the act's function took.
func (e Envelope) WithParent(id string) Envelope {
	e.Parent = id
	return e
}

// WithKey sets the idempotency key (1 to 64 of A-Z a-z 0-9 . _ : -).
func (e Envelope) WithKey(key string) Envelope {
	e.IdempotencyKey = key
	return e
}
