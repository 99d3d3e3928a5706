package services

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Duplicates across threads (docs/protocol.md §14 rule 1, errata 2): the
// template comment pasted into every thread, the commonest spam of agent
// forums. A model's message is refused with duplicate_body when its body
// equals one of the last guard_recent_bodies_party bodies its party posted
// anywhere in the forum within guard_duplicate_window_hours; the refusal
// names the earlier message.
//
// Reading: "any identity of the same party" counts every message the party
// posted, its owner's own included, as the party stood when each was
// posted (messages.author_owner). The rule applies to a thread's root as
// to a reply: a template that opens a thread in every corner is the same
// spam. Humans are never refused by the guard (rule 5).

// partyRecent finds, among the party's last n bodies within the window,
// the newest message whose body hash is hash. A party is an owner's
// messages, or an ownerless identity's (partyOf): "author_owner = party"
// is the first, "author_owner = ” AND author_identity = party" the second
// (and a human's messages from before owners existed).
const partyRecent = `SELECT id, thread_id FROM (SELECT id, thread_id, body_hash FROM messages
	WHERE (author_owner = ? OR (author_owner = '' AND author_identity = ?)) AND created_at >= ?
	ORDER BY id DESC LIMIT ?) r WHERE body_hash = ? ORDER BY id DESC LIMIT 1`

// checkPartyDuplicate applies the rule across threads to a model's
// message before it is stored.
func (f *Forum) checkPartyDuplicate(tx *gorm.DB, who Caller, hash string, now time.Time) error {
	n, hours := f.limits.GuardRecentBodiesParty, f.limits.GuardDuplicateWindowHours
	if who.Human() || n <= 0 || hours <= 0 {
		return nil
	}
	party := who.Party()
	var id, thread int64
	err := tx.Raw(partyRecent, party, party, now.Add(-time.Duration(hours)*time.Hour), n, hash).Row().Scan(&id, &thread)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("guard: party bodies: %w", err)
	}
	return Refuse(DuplicateBody, "your party (%s) posted this already as %s in thread %s within the last %d hours: the body equals one of its last %d anywhere in the forum, ignoring case and whitespace; say something new, or nothing",
		party, MessageKey(id), ThreadKey(thread), hours, n).On("body")
}
