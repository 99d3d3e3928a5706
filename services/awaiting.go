package services

import (
	"database/sql"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"parley/models"
)

// Anyone is the identity a turn awaits when anyone may take it (an
// Awaiting's "*").
const Anyone = "*"

// turn is an awaited (identity, extension); the zero value is nobody.
type turn struct{ identity, extension string }

var anyone = turn{identity: Anyone}

func setAwaiting(m *models.Message, t turn) {
	m.AwaitingIdentity, m.AwaitingExtension = t.identity, t.extension
}

func askAwaiting(env Envelope) turn {
	if env.To != nil {
		return turn{env.To.Identity, env.To.Extension}
	}
	return anyone
}

// notSelf applies "a message never awaits its own author" (docs/protocol.md §4,
// errata 1): where a rule would name the author's own (identity,
// extension), the message awaits anyone instead.
func (t turn) notSelf(author turn) turn {
	if t == author {
		return anyone
	}
	return t
}

// replyAwaiting applies the awaiting column of docs/protocol.md §4 and §10 to a
// reply; question is the nearest ask or clarify at or above the parent of
// an answer (nil for other acts, or when there is none), claim the claim
// an attest, refute or verify acts on.
//
// Reading: propose awaits the creator's identity with no extension, since
// authority belongs to the identity, not to the extension (§6 rule 1).
func replyAwaiting(th models.Thread, parent models.Message, env Envelope, question *models.Message, claim *models.Claim) turn {
	switch env.Kind {
	case Ask:
		return askAwaiting(env)
	case Assert:
		return anyone
	case Refute:
		return turn{claim.ClaimantIdentity, claim.ClaimantExtension}
	case Attest, Verify:
		return turn{th.AwaitingIdentity, th.AwaitingExtension}
	case Answer:
		if question == nil {
			return turn{th.CreatedByIdentity, th.CreatedByExtension}
		}
		return turn{question.AuthorIdentity, question.AuthorExtension}
	case Clarify, Object:
		return turn{parent.AuthorIdentity, parent.AuthorExtension}
	case Note:
		return turn{th.AwaitingIdentity, th.AwaitingExtension}
	case Propose:
		return turn{identity: th.CreatedByIdentity}
	case Mark:
		if env.State == Open {
			return anyone
		}
		return turn{}
	case Reopen:
		return anyone
	}
	return turn{} // decide
}

// questionAbove is the question an answer answers: the nearest ask or
// clarify at or above parent (docs/protocol.md §4, errata 1), or nil when there is
// none. One recursive query walks the chain.
func questionAbove(tx *gorm.DB, parent models.Message) (*models.Message, error) {
	var q models.Message
	err := scanRow(tx.Raw(`WITH RECURSIVE chain AS (
			SELECT id, parent_id, kind, depth, author_identity, author_extension FROM messages WHERE id = ?
			UNION ALL
			SELECT m.id, m.parent_id, m.kind, m.depth, m.author_identity, m.author_extension
			FROM messages m JOIN chain c ON m.id = c.parent_id)
		SELECT id, parent_id, kind, depth, author_identity, author_extension FROM chain
		WHERE kind IN ? ORDER BY depth DESC LIMIT 1`,
		parent.ID, []string{string(Ask), string(Clarify)}), &q.ID, &q.ParentID, &q.Kind, &q.Depth, &q.AuthorIdentity, &q.AuthorExtension)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find question: %w", err)
	}
	return &q, nil
}

// checkAddressee refuses an ask addressed to an identity that does not
// exist: one that holds or held a token, or a human account.
func checkAddressee(tx *gorm.DB, to *Address) error {
	if to == nil {
		return nil
	}
	ok, err := identityExists(tx, to.Identity)
	if err != nil {
		return err
	}
	if !ok {
		return Refuse(IdentityNotFound, "identity %s does not exist", to.Identity).On("to.identity")
	}
	return nil
}
