package services

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"parley/models"
)

// Owners and parties (docs/protocol.md §15.1, profile witness). Every token
// has an owner, a human; the identities of one owner form one party, and a
// token without an owner is its own party. The rules that stop a party from
// vouching for itself (self_attest per party, the verify quorum, duplicates
// across threads) compare parties, never identities alone.
//
// Reading: an identity may hold tokens of different owners (the operator
// gives one handle a second token for another human). The owner that
// counts for an act is that of the token that made it, and it is copied
// onto what the act stored (messages.author_owner, claims.claimant_owner),
// as it was then: history stays true when an owner changes later, and a
// rule reads one row instead of every token of an identity. An identity's
// entry in the directory shows the owner of its newest valid token, as it
// shows that token's label.

// EventTypeOwner is the type of the event that records an owner change.
const EventTypeOwner = "owner"

// ownerOf is a token's owner as services use it: a human's token is owned
// by that human, whatever its row holds (tokens of humans created before
// owners existed hold none); an agent's is its row's owner, "" for none.
func ownerOf(identity, kind, owner string) string {
	if AuthorKind(kind) == KindHuman {
		return identity
	}
	return owner
}

// partyOf is the party an owner and an identity make: the owner when there
// is one, else the identity itself.
func partyOf(owner, identity string) string {
	if owner != "" {
		return owner
	}
	return identity
}

// storedOwner is the owner written on what the caller stores: an agent's
// token's owner; "" for a human, who owns itself (ownerOf, claimantOwner
// and partyOf read it back so), and for an ownerless token. Rows written
// with "" name the column not at all, so that today's code still writes
// a forum at an older schema (the migration tests build one).
func (c Caller) storedOwner() string {
	if c.Human() {
		return ""
	}
	return c.Owner
}

// Party is the caller's party.
func (c Caller) Party() string { return partyOf(c.Owner, c.Identity) }

// messageParty is the party of a message's author when it was posted. A
// human's message from before owners existed holds no owner: the human is
// its own party, which is what partyOf gives.
func messageParty(m models.Message) string { return partyOf(m.AuthorOwner, m.AuthorIdentity) }

// claimantParty is the party of a claim's claimant when it asserted it.
func claimantParty(c models.Claim) string { return partyOf(c.ClaimantOwner, c.ClaimantIdentity) }

// claimantOwner is the owner a claim shows for its claimant: a human
// claimant owns itself, an agent shows the owner stored when it asserted.
func claimantOwner(c models.Claim) string {
	if strings.HasPrefix(c.ClaimantIdentity, HumanRealm+":") {
		return c.ClaimantIdentity
	}
	return c.ClaimantOwner
}

// ownerField is how the wire shows an owner: "human:<name>", or null for a
// token that is its own party.
func ownerField(owner string) *string { return optional(owner) }

// shownOwner is the owner a message or claim shows: the stored one, or for
// a human's act stored before owners existed, the human.
func shownOwner(owner, identity, kind string) *string {
	return ownerField(ownerOf(identity, kind, owner))
}

// OwnerChange answers `parley token owner`: the token as it is now and the
// owner event that recorded the change.
type OwnerChange struct {
	Token TokenInfo  `json:"token"`
	Event OwnerEvent `json:"event"`
}

// OwnerEvent is one recorded owner change, of type "owner".
type OwnerEvent struct {
	ID       int64     `json:"id"`
	Type     string    `json:"type"`
	Token    int64     `json:"token"`
	Identity string    `json:"identity"`
	From     *string   `json:"from_owner" jsonschema:"nullable"`
	To       *string   `json:"to_owner" jsonschema:"nullable"`
	Actor    string    `json:"actor"`
	At       time.Time `json:"at"`
}

// ownerName checks that name is a human account and answers its identity.
func ownerName(tx *gorm.DB, name string) (string, error) {
	name = strings.TrimPrefix(name, HumanRealm+":")
	err := tx.Where("name = ?", name).First(&models.User{}).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", Refuse(IdentityNotFound, "no human named %q: an owner is a human account; add one first", name).On("owner")
	}
	if err != nil {
		return "", fmt.Errorf("find owner: %w", err)
	}
	return HumanRealm + ":" + name, nil
}

// SetTokenOwner makes the human name the owner of an agent's token, an
// operator's act (docs/protocol.md §15.1), recorded as an event of type
// owner in the same transaction; actor names who made it. Setting the
// owner a token already has records nothing new and answers the last
// event of the token, if any.
//
// Reading: the events of §8 belong to threads, and an owner change belongs
// to none; it is kept in a log of its own (owner_events). What the token
// posted before keeps the owner it had then (see the package comment on
// parties above).
//
// Reading: a human's token is owned by that human and cannot be given to
// another (invalid_body): a human is never another human's agent.
func (f *Forum) SetTokenOwner(ctx context.Context, id int64, name, actor string) (OwnerChange, error) {
	var out OwnerChange
	err := f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var tok models.Token
		if err := tx.First(&tok, id).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return Refuse(IdentityNotFound, "no token with id %d", id).On("id")
			}
			return err
		}
		if AuthorKind(tok.AuthorKind) == KindHuman {
			return Refuse(InvalidBody, "token %d is %s's own: a human's token is owned by that human", id, tok.Identity).On("id")
		}
		owner, err := ownerName(tx, name)
		if err != nil {
			return err
		}
		ev := models.OwnerEvent{Type: EventTypeOwner, TokenID: tok.ID, Identity: tok.Identity, FromOwner: tok.Owner,
			ToOwner: owner, Actor: actor, At: f.timestamp()}
		if tok.Owner == owner {
			err := tx.Where("token_id = ?", tok.ID).Order("id DESC").Limit(1).Find(&ev).Error
			out = OwnerChange{Token: tokenInfo(tok), Event: ownerEvent(ev)}
			return err
		}
		if err := tx.Exec("UPDATE tokens SET owner = ? WHERE id = ?", owner, tok.ID).Error; err != nil {
			return err
		}
		if err := tx.Create(&ev).Error; err != nil {
			return err
		}
		tok.Owner = owner
		out = OwnerChange{Token: tokenInfo(tok), Event: ownerEvent(ev)}
		return nil
	})
	if err != nil {
		return OwnerChange{}, fmt.Errorf("set owner: %w", err)
	}
	return out, nil
}

// OwnerEvents lists the owner events of a token, oldest first (every
// token's when id is 0).
func (f *Forum) OwnerEvents(ctx context.Context, id int64) ([]OwnerEvent, error) {
	q := f.db.WithContext(ctx).Order("id")
	if id != 0 {
		q = q.Where("token_id = ?", id)
	}
	var rows []models.OwnerEvent
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("owner events: %w", err)
	}
	out := make([]OwnerEvent, len(rows))
	for i, r := range rows {
		out[i] = ownerEvent(r)
	}
	return out, nil
}

func ownerEvent(e models.OwnerEvent) OwnerEvent {
	return OwnerEvent{ID: e.ID, Type: e.Type, Token: e.TokenID, Identity: e.Identity, From: ownerField(e.FromOwner),
		To: ownerField(e.ToOwner), Actor: e.Actor, At: e.At.UTC()}
}
