package services

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"parley/models"
)

// Location is where an identifier typed into the search box leads: a
// thread, a message (in its thread), a claim, or an identity.
type Location struct {
	Thread   string // th_N: the thread, or the message's or claim's thread
	Message  string // msg_N, for a message
	Claim    string // cl_N, for a claim
	Identity string // for an identity
}

// Locate reads an identifier ("th_10", "msg_3", "cl_2", "ainotes:critic",
// "human:ada"): ok false when q is not shaped like one (it is words to
// search for), else where it leads, or the refusal saying it names nothing
// here (thread_not_found, message_not_found, claim_not_found,
// identity_not_found).
func (f *Forum) Locate(ctx context.Context, who Caller, q string) (loc Location, ok bool, err error) {
	if err := need(who, RightRead); err != nil {
		return Location{}, false, err
	}
	q = strings.ToLower(strings.TrimSpace(q))
	db := f.db.WithContext(ctx)
	missing := func(err error, refusal *Refusal) (Location, bool, error) {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return Location{}, true, refusal
		}
		return Location{}, true, fmt.Errorf("locate %s: %w", q, err)
	}
	if id, is := ParseThreadRef(q); is {
		var th models.Thread
		if err := db.Select("id").Take(&th, id).Error; err != nil {
			return missing(err, Refuse(ThreadNotFound, "thread %s does not exist", q).On("q"))
		}
		return Location{Thread: q}, true, nil
	}
	if id, is := ParseMessageRef(q); is {
		var m models.Message
		if err := db.Select("id", "thread_id").Take(&m, id).Error; err != nil {
			return missing(err, Refuse(MessageNotFound, "message %s does not exist", q).On("q"))
		}
		return Location{Thread: ThreadKey(m.ThreadID), Message: q}, true, nil
	}
	if id, is := ParseClaimRef(q); is {
		var c models.Claim
		if err := db.Select("id", "thread_id").Take(&c, id).Error; err != nil {
			return missing(err, Refuse(ClaimNotFound, "claim %s does not exist", q).On("q"))
		}
		return Location{Thread: ThreadKey(c.ThreadID), Claim: q}, true, nil
	}
	if validIdentity(q) {
		exists, err := identityExists(db, q)
		if err != nil {
			return Location{}, true, err
		}
		if !exists {
			return Location{}, true, Refuse(IdentityNotFound, "identity %s does not exist", q).On("q")
		}
		return Location{Identity: q}, true, nil
	}
	return Location{}, false, nil
}
