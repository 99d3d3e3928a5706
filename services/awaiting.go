package services

import (
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
// reply; question is the question an answer answers (questionAbove), nil
// for other acts or when there is none; claim is the claim
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

// questionAbove is the question an answer by answerer answers: the nearest
// ask or clarify at or above parent that the answering identity did not
// write itself (docs/protocol.md §4, errata 1 and 2), or nil when there is
// none. One recursive query reads the chain; the choice is made in Go
// (questionIn).
func questionAbove(tx *gorm.DB, parent models.Message, answerer string) (*models.Message, error) {
	if chain, ok := takeQuestionChain(tx, parent.ID); ok {
		return questionIn(chain, answerer), nil // read in the lock's batch
	}
	rows, err := tx.Raw(`WITH RECURSIVE chain AS (
			SELECT id, parent_id, kind, depth, author_identity, author_extension FROM messages WHERE id = ?
			UNION ALL
			SELECT m.id, m.parent_id, m.kind, m.depth, m.author_identity, m.author_extension
			FROM messages m JOIN chain c ON m.id = c.parent_id)
		SELECT id, parent_id, kind, depth, author_identity, author_extension FROM chain
		WHERE kind IN ? ORDER BY depth`,
		parent.ID, []string{string(Ask), string(Clarify), string(Answer)}).Rows()
	if err != nil {
		return nil, fmt.Errorf("find question: %w", err)
	}
	defer rows.Close()
	var chain []models.Message
	for rows.Next() {
		var q models.Message
		if err := rows.Scan(&q.ID, &q.ParentID, &q.Kind, &q.Depth, &q.AuthorIdentity, &q.AuthorExtension); err != nil {
			return nil, fmt.Errorf("find question: %w", err)
		}
		chain = append(chain, q)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find question: %w", err)
	}
	return questionIn(chain, answerer), nil
}

// questionIn picks, from chain (the asks, clarifies and answers from the
// root down to the parent, in that order), the question an answer by the
// identity answerer answers.
//
// "Did not write itself" is per identity, whatever the extension, as
// docs/protocol.md §4 says "the answering identity": a sub-agent answering
// the reply to its sibling's clarify answers the question they were asked.
//
// Reading: a clarify already answered in the chain (by an answer between
// it and parent) is skipped too: its round is over, and the answers below
// it unwind to the question it clarified. Without this, nested rounds
// (ask → clarify → clarify of the clarify → answers unwinding) would land
// the last answer on the inner clarify, answered already, and never on
// the ask; errata 2 wants "the question you were asked" answered. An ask
// is never skipped for having been answered: a second or corrected answer
// still answers it (and marks, after a withdrawn proposal). Which clarify
// an earlier answer answered is decided by this same rule over the chain
// above it, so the walk is deterministic from the stored messages.
func questionIn(chain []models.Message, answerer string) *models.Message {
	done := map[int64]bool{} // clarifies answered in the chain
	nearest := func(above []models.Message, who string) *models.Message {
		for i := len(above) - 1; i >= 0; i-- {
			q := &above[i]
			switch {
			case Kind(q.Kind) != Ask && Kind(q.Kind) != Clarify:
			case q.AuthorIdentity == who:
			case Kind(q.Kind) == Clarify && done[q.ID]:
			default:
				return q
			}
		}
		return nil
	}
	for i, m := range chain {
		if Kind(m.Kind) != Answer {
			continue
		}
		if q := nearest(chain[:i], m.AuthorIdentity); q != nil && Kind(q.Kind) == Clarify {
			done[q.ID] = true
		}
	}
	return nearest(chain, answerer)
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
