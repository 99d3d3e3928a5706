package services

import (
	"errors"
	"fmt"

	"gorm.io/gorm"

	"parley/models"
)

// turn is an awaited (identity, extension); the zero value is nobody.
type turn struct{ identity, extension string }

var anyone = turn{identity: "*"}

func setAwaiting(m *models.Message, t turn) {
	m.AwaitingIdentity, m.AwaitingExtension = t.identity, t.extension
}

func askAwaiting(env Envelope) turn {
	if env.To != nil {
		return turn{env.To.Identity, env.To.Extension}
	}
	return anyone
}

// replyAwaiting applies the awaiting column of PARLEY.md §4.
//
// Reading: propose awaits the creator's identity with no extension, since
// authority belongs to the identity, not to the extension (§6 rule 1).
func replyAwaiting(tx *gorm.DB, th models.Thread, parent models.Message, env Envelope) (turn, error) {
	switch env.Kind {
	case Ask:
		return askAwaiting(env), nil
	case Answer:
		return questioner(tx, th, parent)
	case Clarify, Object:
		return turn{parent.AuthorIdentity, parent.AuthorExtension}, nil
	case Note:
		return turn{th.AwaitingIdentity, th.AwaitingExtension}, nil
	case Propose:
		return turn{identity: th.CreatedByIdentity}, nil
	case Mark:
		if env.State == Open {
			return anyone, nil
		}
		return turn{}, nil
	case Reopen:
		return anyone, nil
	}
	return turn{}, nil // decide
}

// questioner is the author of the nearest ask at or above parent, or the
// thread's creator when there is none; one recursive query walks the chain.
func questioner(tx *gorm.DB, th models.Thread, parent models.Message) (turn, error) {
	var ask models.Message
	err := tx.Raw(`WITH RECURSIVE chain AS (
			SELECT id, parent_id, kind, depth, author_identity, author_extension FROM messages WHERE id = ?
			UNION ALL
			SELECT m.id, m.parent_id, m.kind, m.depth, m.author_identity, m.author_extension
			FROM messages m JOIN chain c ON m.id = c.parent_id)
		SELECT * FROM chain WHERE kind = ? ORDER BY depth DESC LIMIT 1`, parent.ID, string(Ask)).Scan(&ask).Error
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return turn{}, fmt.Errorf("find question: %w", err)
	}
	if ask.ID == 0 {
		return turn{th.CreatedByIdentity, th.CreatedByExtension}, nil
	}
	return turn{ask.AuthorIdentity, ask.AuthorExtension}, nil
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
