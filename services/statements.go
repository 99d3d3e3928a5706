package services

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	intoto "github.com/in-toto/attestation/go/v1"
	"github.com/secure-systems-lab/go-securesystemslib/cjson"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"parley/models"
)

// Signed statements (docs/protocol.md §15.5): each verdict — a claim
// becoming verified or refuted, a thread's decided or closed becoming its
// state of record — is signed as an in-toto Statement v1 in a DSSE
// envelope, in the transaction of the act that reached it, so that no
// verdict is stored without its statement.

// PayloadType is the DSSE payload type of an in-toto statement.
const PayloadType = "application/vnd.in-toto+json"

// PredicateType names Parley's verdict predicate.
//
// Reading: a URN, since a predicate type is a name, not a document to
// fetch.
const PredicateType = "urn:parley:witness:verdict:v1"

// SignedEnvelope is a DSSE envelope as it travels.
type SignedEnvelope struct {
	PayloadType string              `json:"payloadType"`
	Payload     string              `json:"payload" jsonschema_description:"The in-toto Statement v1, JSON, in standard base64."`
	Signatures  []EnvelopeSignature `json:"signatures"`
}

// EnvelopeSignature is one signature of a DSSE envelope.
type EnvelopeSignature struct {
	KeyID string `json:"keyid"`
	Sig   string `json:"sig" jsonschema_description:"Ed25519 over DSSE's pre-authentication encoding, in standard base64."`
}

// Statement is a stored signed statement.
type Statement struct {
	ID        string         `json:"id" jsonschema_description:"st_N."`
	Subject   string         `json:"subject" jsonschema_description:"The claim (cl_N) or thread (th_N) the verdict is about."`
	Verdict   string         `json:"verdict" jsonschema_description:"verified or refuted (a claim), decided or closed (a thread's state of record)."`
	KeyID     string         `json:"key_id"`
	CreatedAt time.Time      `json:"created_at"`
	Envelope  SignedEnvelope `json:"envelope" jsonschema_description:"The DSSE envelope: any DSSE verifier checks it with the instance's published public keys."`
}

// StatementView answers get_statement.
type StatementView struct {
	Statement Statement `json:"statement"`
}

// Decider is who reached a verdict.
type Decider struct {
	Identity   string     `json:"identity"`
	Extension  *string    `json:"extension"`
	AuthorKind AuthorKind `json:"author_kind"`
	// Owner is the human the decider acted for (§15.1), human:<name>;
	// null for a token that is its own party.
	Owner *string `json:"owner"`
}

// VerdictPredicate is the statement's predicate: what was decided, on what
// evidence, by whom and when. It carries the subject's shape itself, whose
// canonical JSON's sha256 is the subject's digest, so that a verifier
// recomputes it offline.
type VerdictPredicate struct {
	Forum     string     `json:"forum"`
	Subject   string     `json:"subject"`
	Verdict   string     `json:"verdict"`
	DecidedBy Decider    `json:"decided_by"`
	Message   *string    `json:"message"`
	Evidence  []Evidence `json:"evidence"`
	DecidedAt time.Time  `json:"decided_at"`
	Claim     *Claim     `json:"claim,omitempty"`
	Thread    *Thread    `json:"thread,omitempty"`
}

// verdict is one verdict an action reached, signed before it commits.
type verdict struct {
	claim   int64 // or 0 for the thread's
	thread  int64
	verdict string
}

// noteClaimVerdict records a claim's verdict for signing.
func (a *action) noteClaimVerdict(claimID, threadID int64, to ClaimStatus) {
	if to == Verified || to == Refuted {
		a.verdicts = append(a.verdicts, verdict{claim: claimID, thread: threadID, verdict: string(to)})
	}
}

// noteRecordVerdict records a thread's new state of record for signing,
// if it is decided or closed.
func (a *action) noteRecordVerdict(th *models.Thread) {
	if s := State(th.RecordState); s == Decided || s == Closed {
		a.verdicts = append(a.verdicts, verdict{thread: th.ID, verdict: string(s)})
	}
}

// signVerdicts signs every verdict the action reached, once its writes are
// done and before its transaction commits; th is the thread as saved.
func (f *Forum) signVerdicts(a *action, th models.Thread) error {
	if len(a.verdicts) == 0 {
		return nil
	}
	key, err := f.signingKey(a.tx)
	if err != nil {
		return err
	}
	signer, err := dsse.NewEnvelopeSigner(keySigner{key})
	if err != nil {
		return err
	}
	for _, v := range a.verdicts {
		p := VerdictPredicate{Forum: f.realm, Verdict: v.verdict, DecidedAt: a.now, Evidence: []Evidence{},
			DecidedBy: Decider{Identity: a.who.Identity, Extension: optional(a.ext), AuthorKind: a.who.Kind,
				Owner: ownerField(ownerOf(a.who.Identity, string(a.who.Kind), a.who.Owner))}}
		if a.msg != nil {
			id := MessageKey(a.msg.ID)
			p.Message = &id
		}
		var shape any
		if v.claim != 0 {
			c, err := f.claimShape(a.tx, v.claim, a.now)
			if err != nil {
				return fmt.Errorf("sign: %w", err)
			}
			p.Subject, p.Claim, shape = c.ID, &c, c
			if act := verdictAct(c, v.verdict); act != nil {
				p.Evidence = act.Evidence
			}
		} else {
			t := f.threadShape(th, a.now)
			p.Subject, p.Thread, shape = t.ID, &t, t
		}
		payload, err := statementPayload(p, shape)
		if err != nil {
			return err
		}
		env, err := signer.SignPayload(context.Background(), PayloadType, payload)
		if err != nil {
			return fmt.Errorf("sign: %w", err)
		}
		raw, err := json.Marshal(env)
		if err != nil {
			return err
		}
		err = a.tx.Exec("INSERT INTO statements (subject, verdict, key_id, envelope, created_at) VALUES (?, ?, ?, ?, ?)",
			p.Subject, v.verdict, key.KeyID, string(raw), a.now).Error
		if err != nil {
			return fmt.Errorf("insert statement: %w", err)
		}
	}
	a.verdicts = nil
	return nil
}

// verdictAct is the act that reached a claim's verdict: its seal, or its
// latest refutation.
func verdictAct(c Claim, v string) *ClaimAct {
	if v == string(Verified) {
		return c.VerifiedBy
	}
	if len(c.Refutations) > 0 {
		return &c.Refutations[len(c.Refutations)-1]
	}
	return nil
}

// SubjectDigest is the sha256, in hex, of a shape's canonical JSON
// (securesystemslib's cjson: sorted keys, no white space).
func SubjectDigest(shape any) (string, error) {
	raw, err := cjson.EncodeCanonical(shape)
	if err != nil {
		return "", fmt.Errorf("canonical JSON: %w", err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), nil
}

// statementPayload builds the in-toto Statement v1 and encodes it as
// protojson, the attestation module's own encoding.
func statementPayload(p VerdictPredicate, shape any) ([]byte, error) {
	digest, err := SubjectDigest(shape)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	pred, err := structpb.NewStruct(m)
	if err != nil {
		return nil, fmt.Errorf("predicate: %w", err)
	}
	st := &intoto.Statement{
		Type:          intoto.StatementTypeUri,
		Subject:       []*intoto.ResourceDescriptor{{Name: "parley:" + p.Forum + "/" + p.Subject, Digest: map[string]string{"sha256": digest}}},
		PredicateType: PredicateType,
		Predicate:     pred,
	}
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("statement: %w", err)
	}
	return protojson.Marshal(st)
}

// GetStatement answers get_statement: the latest signed statement about a
// claim (cl_N) or a thread (th_N).
//
// Reading: §15.5's get_statement {claim | thread} and the route's {id} are
// one argument, id, naming the claim or the thread; the answer is its
// latest statement, the verdict that stands (a verified claim later
// refuted has two). A claim or thread without a verdict yet is refused
// with its not-found reason, the message saying that no statement exists:
// the protocol has no reason of its own for it.
func (f *Forum) GetStatement(ctx context.Context, who Caller, id string) (StatementView, error) {
	if err := need(who, RightRead); err != nil {
		return StatementView{}, err
	}
	var subject string
	var missing Reason
	switch {
	case strings.HasPrefix(id, claimPrefix):
		n, ok := ParseClaimRef(id)
		if !ok {
			return StatementView{}, badClaimRef("id")
		}
		subject, missing = ClaimKey(n), ClaimNotFound
	case strings.HasPrefix(id, threadPrefix):
		n, ok := ParseThreadRef(id)
		if !ok {
			return StatementView{}, badThreadRef("id")
		}
		subject, missing = ThreadKey(n), ThreadNotFound
	default:
		return StatementView{}, Refuse(InvalidBody, `id must name a claim "cl_N" or a thread "th_N"`).On("id")
	}
	var row struct {
		ID        int64
		Subject   string
		Verdict   string
		KeyID     string
		Envelope  string
		CreatedAt time.Time
	}
	res := f.db.WithContext(ctx).Raw("SELECT id, subject, verdict, key_id, envelope, created_at FROM statements WHERE subject = ? ORDER BY id DESC LIMIT 1", subject).Scan(&row)
	if res.Error != nil {
		return StatementView{}, fmt.Errorf("get statement: %w", res.Error)
	}
	if res.RowsAffected == 0 || row.ID == 0 {
		return StatementView{}, Refuse(missing, "%s has no signed statement: none exists until a claim is verified or refuted, or a thread's decided or closed becomes its state of record", subject).On("id")
	}
	var env SignedEnvelope
	if err := json.Unmarshal([]byte(row.Envelope), &env); err != nil {
		return StatementView{}, fmt.Errorf("get statement: %w", err)
	}
	return StatementView{Statement: Statement{ID: "st_" + fmt.Sprint(row.ID), Subject: row.Subject, Verdict: row.Verdict,
		KeyID: row.KeyID, CreatedAt: row.CreatedAt.UTC(), Envelope: env}}, nil
}
