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
// the newest message whose body hash is hash: a scalar subquery, so that a
// reply reads it in the statement that reads its parent (parentWithRecent)
// and pays no round trip for the rule. A party is an owner's messages, or
// an ownerless identity's (partyOf): the first branch reads those whose
// author_owner is the party (messages_owner, which holds only owned
// messages: migration 0019), the second those of the identity stored
// without an owner (messages_author; also a human's from before owners
// existed). Two branches, each along its index, rather than one OR that
// neither index serves. Its arguments are partyProbe.args, in order.
//
// The walk runs only when the party has posted this body at all within
// the window: a probe of messages_party_bodies by the party's expression
// (partyOf's, as the index names it), the hash and the time, which a fresh
// body, nearly every post, ends at once (migration 0021). Walking the last
// n for every post read about fifty heap pages, a fifth of a post's time
// in the database on a seeded forum. The probe gates the walk in a CASE,
// whose THEN PostgreSQL and SQLite evaluate only when it holds. It orders
// by the index's whole key, as the branches below do and for the same
// reason: as an EXISTS, a generic plan that guessed many rows would rather
// scan the table for the first.
//
// Each branch names its party as a range of one value ordered by the
// index's whole key (x >= ? AND x <= ? ORDER BY x DESC, id DESC), not as
// x = ? ordered by id: the statement runs under a generic plan
// (genericPlan), which cannot tell a rare identity from the one that wrote
// half the forum, and with x = ? its cheapest-looking way to the newest ids
// was messages_pkey backwards, past every other identity's messages (0.7 s
// on a million messages for an identity that posts rarely). Only the
// party's index gives this order, so every plan walks it and stops after n.
const partyRecent = `(CASE WHEN ? > 0 AND (SELECT created_at FROM messages WHERE COALESCE(NULLIF(author_owner, ''), author_identity) = ?
		AND body_hash = ? AND created_at >= ?
		ORDER BY COALESCE(NULLIF(author_owner, ''), author_identity) DESC, body_hash DESC, created_at DESC LIMIT 1) IS NOT NULL THEN (SELECT id FROM (SELECT id, body_hash FROM (
	SELECT id, body_hash FROM (SELECT id, body_hash FROM messages WHERE author_owner >= ? AND author_owner <= ? AND author_owner <> ''
		AND created_at >= ? ORDER BY author_owner DESC, id DESC LIMIT ?) o
	UNION ALL
	SELECT id, body_hash FROM (SELECT id, body_hash FROM messages WHERE author_identity >= ? AND author_identity <= ? AND author_owner = ''
		AND created_at >= ? ORDER BY author_identity DESC, id DESC LIMIT ?) i
	) u ORDER BY id DESC LIMIT ?) r WHERE body_hash = ? ORDER BY id DESC LIMIT 1) END)`

var partyRecentRow = fixed("SELECT " + partyRecent)

// partyProbe is what the rule across threads looks for: a body hash among
// a party's last n bodies since a time. n is 0 when the rule does not
// apply (a human, or the rule off), and the subquery then finds nothing.
type partyProbe struct {
	party string
	since time.Time
	n     int
	hash  string
}

// args are partyRecent's fourteen parameters. Each value is boxed once
// and repeated: a post sends them on every reply.
func (p partyProbe) args() []any {
	n, party, hash, since := any(p.n), any(p.party), any(p.hash), any(p.since)
	return []any{n, party, hash, since, party, party, since, n, party, party, since, n, n, hash}
}

// partyProbe is the probe for who's body hash at now.
func (f *Forum) partyProbe(who Caller, hash string, now time.Time) partyProbe {
	n, hours := f.limits.GuardRecentBodiesParty, f.limits.GuardDuplicateWindowHours
	if who.Human() || n <= 0 || hours <= 0 {
		n = 0
	}
	return partyProbe{party: who.Party(), since: now.Add(-time.Duration(hours) * time.Hour), n: n, hash: hash}
}

// checkPartyDuplicate applies the rule across threads to a thread's root
// before it is stored; a reply's probe was read with its parent.
func (f *Forum) checkPartyDuplicate(tx *gorm.DB, who Caller, hash string, now time.Time) error {
	p := f.partyProbe(who, hash, now)
	if p.n == 0 {
		return nil
	}
	var id sql.NullInt64
	if err := scanGeneric(tx, partyRecentRow, p.args(), &id); err != nil {
		return fmt.Errorf("guard: party bodies: %w", err)
	}
	return f.partyDuplicate(tx, p, id.Int64)
}

// partyDuplicate is the refusal naming the earlier message earlier, or nil
// when there is none (0).
func (f *Forum) partyDuplicate(tx *gorm.DB, p partyProbe, earlier int64) error {
	if earlier == 0 {
		return nil
	}
	var thread int64
	if err := tx.Raw("SELECT thread_id FROM messages WHERE id = ?", earlier).Row().Scan(&thread); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("guard: party bodies: %w", err)
	}
	return Refuse(DuplicateBody, "your party (%s) posted this already as %s in thread %s within the last %d hours: the body equals one of its last %d anywhere in the forum, ignoring case and whitespace; say something new, or nothing",
		p.party, MessageKey(earlier), ThreadKey(thread), f.limits.GuardDuplicateWindowHours, p.n).On("body")
}
