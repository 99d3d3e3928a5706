package services

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// inboxTurns selects the first limit turns after since in the caller's
// inbox as seen from one extension ("" for none), oldest first: the same
// rows as inboxScope, read so that the cost does not grow with the forum.
//
// The inbox is two index ranges of threads_inbox (migration 0012): the
// turns awaiting the caller's identity and those awaiting anyone, each
// already in turn order. A single "awaiting_identity IN (me, '*')" made
// both databases fetch every thread awaiting anyone and sort them all
// before the LIMIT (13 ms at 1,000 threads, growing with the forum); two
// branches that each stop after limit rows, merged by UNION ALL, read at
// most 2 × limit index entries whatever the forum's size — plus the turns
// the caller opened itself, which it never sees (hidden questions).
//
// The terminal states are written as literals, not parameters, so that
// PostgreSQL can prove a generic plan's predicate implies the partial
// index's and SQLite matches it term for term.
func (f *Forum) inboxTurns(ctx context.Context, who Caller, ext string, since int64, limit int) *gorm.DB {
	branch := `SELECT * FROM (SELECT threads.* FROM threads
		JOIN messages turn ON turn.id = threads.turn_message_id
		WHERE threads.awaiting_identity = ? %s AND threads.turn_seq > ?
		  AND threads.record_state NOT IN ` + terminalList + `
		  AND NOT (turn.author_identity = ? AND turn.author_extension = ?)
		ORDER BY threads.turn_seq LIMIT ?) %s`
	mineExt, mineArgs := "", []any{who.Identity}
	if ext != "" {
		// From an extension, a turn addressed to another extension of the
		// caller's identity is not its own (see Inbox).
		mineExt = "AND threads.awaiting_extension IN (?, ?)"
		mineArgs = append(mineArgs, "", ext)
	}
	mineArgs = append(mineArgs, since, who.Identity, ext, limit)
	anyArgs := []any{anyone.identity, since, who.Identity, ext, limit}
	sql := fmt.Sprintf(branch, mineExt, "mine") + " UNION ALL " + fmt.Sprintf(branch, "", "anyone") + " ORDER BY turn_seq LIMIT ?"
	return f.db.WithContext(ctx).Raw(sql, append(append(mineArgs, anyArgs...), limit)...)
}

// terminalList is terminalStates as an SQL list of literals.
var terminalList = func() string {
	q := make([]string, 0, 4)
	for _, s := range terminalStates() {
		q = append(q, "'"+s+"'")
	}
	return "(" + strings.Join(q, ", ") + ")"
}()
