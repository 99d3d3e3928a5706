package services

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"parley/models"
)

// Posted answers post: the stored message and the thread after it, and
// for a dialectic act the claim after it (docs/protocol.md §8.2). Replayed
// is true when the post was a retry (its idempotency_key was used before
// for the same envelope): nothing was stored, and the rest is the first
// post's answer as it was then (docs/protocol.md §3).
//
// Reading: replayed is in the answer's body on both bindings, not only
// beside it over MCP, since an MCP tool's structured content is exactly
// the HTTP body (docs/protocol.md §2.1); HTTP says it in its status (200)
// and header (Idempotent-Replayed) as well.
type Posted struct {
	Message  *Message `json:"message"`
	Thread   Thread   `json:"thread"`
	Claim    *Claim   `json:"claim,omitempty"`
	Replayed bool     `json:"replayed,omitempty" jsonschema_description:"true when this post replays an earlier one with the same idempotency_key and envelope: nothing new was stored, and message, thread and claim are the first post's answer, as it was then."`
}

// Post carries out one envelope (docs/protocol.md §3–§7, §10): it parses it
// strictly, checks rights, state, authority, loop protection, claims and
// limits, and stores the message, the thread's new state and awaiting, the
// claims it changes and the events, in one transaction. An envelope with an
// idempotency_key the caller used in the last 24 hours is a retry and
// answers the first post again, or a reuse and is refused
// (idempotency.go).
func (f *Forum) Post(ctx context.Context, who Caller, raw []byte) (Posted, error) {
	return f.PostKeyed(ctx, who, raw, "")
}

// PostKeyed is Post with the HTTP binding's Idempotency-Key header, ""
// when absent: the same as the body's idempotency_key, and refused
// invalid_body when both are given and differ.
func (f *Forum) PostKeyed(ctx context.Context, who Caller, raw []byte, headerKey string) (Posted, error) {
	if err := need(who, RightWrite); err != nil {
		return Posted{}, err
	}
	if err := f.meterSessionPost(ctx, who); err != nil {
		return Posted{}, err
	}
	env, err := f.ParseEnvelope(raw)
	if err != nil {
		return Posted{}, err
	}
	if err := withHeaderKey(&env, headerKey); err != nil {
		return Posted{}, err
	}
	if err := checkVerifier(who, env.Kind); err != nil {
		return Posted{}, err
	}
	out, err := f.post(ctx, who, env)
	if errors.Is(err, errKeyTaken) {
		// Another post with this key committed while this one ran: this
		// time it reads that one's row and replays it.
		out, err = f.post(ctx, who, env)
	}
	if err != nil {
		return Posted{}, fmt.Errorf("post: %w", err)
	}
	if env.IdempotencyKey != "" && !out.Replayed {
		f.pruneKeys(ctx)
	}
	return out, nil
}

// post is Post's transaction: a keyed envelope's replay first, else the
// chain of checks and the writes, and the key with the answer last.
func (f *Forum) post(ctx context.Context, who Caller, env Envelope) (Posted, error) {
	var out Posted
	ctx, written := withSink(ctx)
	err := f.transact(ctx, func(tx *gorm.DB) error {
		stale := false
		if env.IdempotencyKey != "" {
			var prior *storedKey
			var err error
			if prior, stale, err = priorKey(tx, who, env.IdempotencyKey, f.timestamp()); err != nil {
				return err
			}
			if prior != nil {
				out, err = replay(*prior, env)
				return err
			}
		}
		if err := checkAddressee(tx, env.To); err != nil {
			return err
		}
		if err := checkBlobEvidence(tx, env.Evidence); err != nil {
			return err
		}
		superseded, err := lockSuperseded(tx, env)
		if err != nil {
			return err
		}
		if env.ThreadID == 0 {
			err = f.openThread(tx, who, env, superseded, &out)
		} else {
			out, err = f.reply(tx, who, env, superseded)
		}
		if err != nil || env.IdempotencyKey == "" {
			return err
		}
		return saveKey(tx, who, env, out, stale, f.timestamp())
	})
	if err != nil {
		return Posted{}, err
	}
	f.published(written)
	return out, nil
}

// reply stores an envelope inside an existing thread.
func (f *Forum) reply(tx *gorm.DB, who Caller, env Envelope, superseded []models.Claim) (Posted, error) {
	p, err := f.checkReply(tx, who, env, superseded)
	if err != nil {
		return Posted{}, err
	}
	th, parent, question, target, chg, work, now, hash := p.th, p.parent, p.question, p.target, p.chg, p.work, p.now, p.hash
	msg := newMessage(th, &parent, who, env, now)
	msg.BodyHash, msg.ChainLen = hash, chainAfter(&parent, who, carriesMark(env.Kind, chg))
	awaiting := replyAwaiting(th, parent, env, question, target).notSelf(turn{who.Identity, env.Extension})
	setAwaiting(&msg, awaiting)
	if !carriesTurn(env.Kind) {
		// The turn this act moves may be overdue and not yet escalated: it
		// was open when its reply_by passed (docs/protocol.md §14 rule 4).
		if _, err := escalateLocked(tx, &th, now); err != nil {
			return Posted{}, err
		}
	}
	var shaped *Message // the answer's message, once shaped
	if idAfterCommit(env, chg, work) {
		err = insertMessageLater(tx, &msg, func() {
			if shaped != nil {
				shaped.ID = MessageKey(msg.ID)
			}
		})
	} else {
		err = insertMessage(tx, &msg)
	}
	if err != nil {
		return Posted{}, fmt.Errorf("insert message: %w", err)
	}
	seq, err := nextSeq(tx)
	if err != nil {
		return Posted{}, err
	}
	a := &action{tx: tx, who: who, ext: env.Extension, msg: &msg, now: now, seq: seq}
	if err := a.applyChange(&th, chg); err != nil {
		return Posted{}, err
	}
	if err := a.recordClaims(th, env, work); err != nil {
		return Posted{}, err
	}
	moved := moveTurn(&th, msg, awaiting, a.seq)
	if moved {
		turnOpened(tx, th.AwaitingIdentity)
	}
	th.MessageCount++
	th.ModelRun = runAfter(th, who, chg)
	th.UpdatedAt, th.ActivitySeq = now, a.seq
	if err := saveThreadTurnAt(tx, &th, &msg, moved && !carriesTurn(env.Kind)); err != nil {
		return Posted{}, fmt.Errorf("update thread: %w", err)
	}
	if err := f.signVerdicts(a, th); err != nil {
		return Posted{}, err
	}
	out, err := f.posted(tx, msg, th, now)
	shaped = out.Message
	return out, err
}

// idAfterCommit reports whether a reply's writes after its message need
// not know the message's id, so that its insert may go out with COMMIT
// (insertMessageLater): an act that changes no state and no claim. Its
// one later write that names the message, the thread's turn, names it
// through the messages' sequence in the same batch (saveThreadTurnAt).
// Every other act names its message in an event, a claim or evidence,
// and a keyed post stores its answer, id included, before it commits.
// The id still comes from the insert: taken ahead of the checks, a
// refused reply would leave a gap in the ids that scripted conversations,
// naming the messages they will make, would see.
func idAfterCommit(env Envelope, chg change, work claimWork) bool {
	return !claimAct(env.Kind) && env.Kind != Assert && chg.effect == unchanged && env.IdempotencyKey == "" &&
		work.target == nil && work.to == "" && len(work.superseded) == 0
}

// posted shapes post's answer; a profile act's includes its claim as the
// act left it.
func (f *Forum) posted(tx *gorm.DB, msg models.Message, th models.Thread, now time.Time) (Posted, error) {
	out := Posted{Message: messageShape(msg), Thread: f.threadShape(th, now)}
	if msg.ClaimID != nil {
		c, err := f.claimShape(tx, *msg.ClaimID, now)
		if err != nil {
			return Posted{}, fmt.Errorf("read claim: %w", err)
		}
		one := []Claim{c}
		f.annotateClaims(tx, one)
		out.Claim = &one[0]
	}
	return out, nil
}

// moveTurn makes the new message's awaiting the thread's (docs/protocol.md §4:
// the thread's awaiting is that of its last message). Every act but note,
// attest and verify opens a new turn at this message.
//
// Reading: a note (and an attest or verify, whose awaiting is "unchanged"
// as a note's) carries the current turn forward and opens none, so the
// turn's message stays the one to reply to. When it cannot carry it (it
// would await its own author, who is then awaited no longer), the turn is
// re-addressed to anyone and counts as new in inboxes.
//
// A new turn takes the deadline of its message (an ask's reply_by, else
// none) and has not escalated (docs/protocol.md §14 rule 4); a carried turn keeps
// both.
func moveTurn(th *models.Thread, msg models.Message, awaiting turn, seq int64) (moved bool) {
	carries := carriesTurn(Kind(msg.Kind))
	if carries && awaiting == (turn{th.AwaitingIdentity, th.AwaitingExtension}) {
		return false
	}
	th.AwaitingIdentity, th.AwaitingExtension = awaiting.identity, awaiting.extension
	th.TurnSeq = seq
	if !carries {
		th.TurnMessageID = msg.ID
		th.ReplyBy, th.EscalatedAt = msg.ReplyBy, nil
	}
	return true
}

// guardReads are what the guard checks later, read with the parent: the
// identity's recent body hashes in the thread and the party's earlier
// message of the same body anywhere (0 for none).
type guardReads struct {
	recent  []string
	earlier int64
	probe   partyProbe
}

// findParent resolves the parent: the root when absent, else a message that
// must exist and belong to the thread. In the same statement it reads the
// guard's recent body hashes of identity in the thread, at most recentMax,
// and what the party probe finds (checkGuard): two round trips less per
// reply.
func findParent(tx *gorm.DB, th models.Thread, id int64, identity string, recentMax int, probe partyProbe) (models.Message, guardReads, error) {
	asked := id
	if id == 0 {
		id = th.RootMessageID
	}
	parent, recent, earlier, ahead, err := takeParentAhead(tx, th.ID, asked, identity, recentMax, probe)
	if !ahead {
		parent, recent, earlier, err = readParentRow(tx, id, th.ID, identity, recentMax, probe)
	}
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return parent, guardReads{}, Refuse(MessageNotFound, "message %s does not exist", MessageKey(id)).On("parent")
	}
	if err != nil {
		return parent, guardReads{}, fmt.Errorf("find parent: %w", err)
	}
	if parent.ThreadID != th.ID {
		return parent, guardReads{}, Refuse(ParentMismatch, "message %s belongs to thread %s, not %s",
			MessageKey(id), ThreadKey(parent.ThreadID), ThreadKey(th.ID)).On("parent")
	}
	return parent, guardReads{recent: recent, earlier: earlier, probe: probe}, nil
}

func newMessage(th models.Thread, parent *models.Message, who Caller, env Envelope, now time.Time) models.Message {
	m := models.Message{
		ThreadID: th.ID, Depth: 1, Kind: string(env.Kind),
		AuthorIdentity: who.Identity, AuthorExtension: env.Extension,
		AuthorKind: string(who.Kind), AuthorBadge: who.Badge(), AuthorOwner: who.storedOwner(),
		Body: env.Body, ProvenanceModel: env.Model, ProvenanceClient: env.Client,
		State: string(env.State), CreatedAt: now,
	}
	if parent != nil {
		m.ParentID, m.Depth = &parent.ID, parent.Depth+1
	}
	if env.To != nil {
		m.ToIdentity, m.ToExtension = env.To.Identity, env.To.Extension
	}
	if env.ClaimID != 0 {
		m.ClaimID = &env.ClaimID
	}
	m.ReplyBy = env.ReplyBy
	return m
}

// action is one act being written, as the steps that record it share it:
// the transaction, who acts and from which extension, the message that
// carries the act (nil for the confirm operation), when, and the last log
// position the action took, which the steps that take more move on.
type action struct {
	tx  *gorm.DB
	who Caller
	ext string
	msg *models.Message
	now time.Time
	seq int64

	verdicts []verdict // reached by this action, signed before it commits (statements.go)
}

// msgID is the id of the action's message for an event, nil when it has
// none.
func (a *action) msgID() *int64 {
	if a.msg == nil {
		return nil
	}
	id := a.msg.ID
	return &id
}

// event is a thread's event of the action at its current log position.
func (a *action) event(th models.Thread, typ EventType, from, to State) models.Event {
	return models.Event{
		Seq: a.seq, ThreadID: th.ID, Type: string(typ), FromState: string(from), ToState: string(to),
		Origin: a.who.Origin(), Label: a.who.EventLabel(),
		ActorIdentity: a.who.Identity, ActorExtension: a.ext,
		MessageID: a.msgID(), At: a.now,
	}
}
