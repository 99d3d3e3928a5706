package services

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"parley/models"
)

// turnColumns are the turn message's columns beside the thread's in an
// inbox row, renamed so that they do not clash with the thread's: the page
// needs no second query for its messages (one round trip less).
var turnColumns = func() string {
	cols := make([]string, len(messageColumns))
	for i, c := range messageColumns {
		cols[i] = "turn." + c + " AS turn_" + c
	}
	return strings.Join(cols, ", ")
}()

// turnRow is a row of inboxTurns: a thread and the message whose turn is
// open.
type turnRow struct {
	thread  models.Thread
	message models.Message
}

func turnFields(r *turnRow) []any {
	return append(threadFields(&r.thread), messageFields(&r.message)...)
}

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
//
// When horizon is not nil it is set to the log's horizon, read before the
// page (see settle); on PostgreSQL both statements go to pgx in one batch,
// which runs them in turn, so the page's snapshot still follows the
// horizon's.
//
// The addressed view (addressed set) is the first branch alone: one range
// of threads_inbox, the caller's identity's, walked in turn order and cut
// after limit rows — however many turns await anyone, it never reads them.
func (f *Forum) inboxTurns(ctx context.Context, who Caller, ext string, since int64, limit int, addressed bool, horizon *int64) ([]turnRow, error) {
	sql, args := inboxTurnsSQL(who, ext, since, limit, addressed)
	if horizon != nil && models.IsPostgresDB(f.db) {
		rows, ok, err := f.horizonAndPagePgx(ctx, sql, args, limit, horizon)
		if ok || err != nil {
			return rows, err
		}
	}
	if horizon != nil {
		var err error
		if *horizon, err = f.horizon(ctx); err != nil {
			return nil, err
		}
	}
	return rowsOf(f.db.WithContext(ctx).Raw(sql, args...), limit, turnFields)
}

// horizonAndPagePgx sends the horizon's statement and the page's to pgx in
// one batch, sets *horizon and answers the page; ok is false when pgx is
// out of reach (see onPgx).
func (f *Forum) horizonAndPagePgx(ctx context.Context, sql string, args []any, limit int, horizon *int64) (rows []turnRow, ok bool, err error) {
	ok, err = onPgx(ctx, f.db.WithContext(ctx), func(c *pgx.Conn) error {
		var b pgx.Batch
		b.Queue(horizonPG, positionsPerTx)
		b.Queue(numbered(sql), args...)
		br := c.SendBatch(ctx, &b)
		defer br.Close()
		if err := br.QueryRow().Scan(horizon); err != nil {
			return err
		}
		page, err := br.Query()
		if err != nil {
			return err
		}
		defer page.Close()
		rows = make([]turnRow, 0, limit)
		for page.Next() {
			rows = append(rows, turnRow{})
			if err := page.Scan(turnFields(&rows[len(rows)-1])...); err != nil {
				return err
			}
		}
		if err := page.Err(); err != nil {
			return err
		}
		return br.Close()
	})
	return rows, ok, err
}

// horizonPG is horizonSQL as pgx takes it.
var horizonPG = numbered(horizonSQL)

func inboxTurnsSQL(who Caller, ext string, since int64, limit int, addressed bool) (string, []any) {
	branch := `SELECT * FROM (SELECT ` + qualified("threads", threadColumns) + ` FROM threads
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
	// The page's turn messages join it once it is cut to limit rows: the
	// branches' rows, twice as many, carry no message bodies.
	withMessages := func(page string) string {
		return "WITH page AS (" + page + ") SELECT page.*, " + turnColumns +
			" FROM page JOIN messages turn ON turn.id = page.turn_message_id ORDER BY page.turn_seq"
	}
	if addressed {
		return withMessages(fmt.Sprintf(branch, mineExt, "mine")), mineArgs
	}
	anyArgs := []any{anyone.identity, since, who.Identity, ext, limit}
	page := fmt.Sprintf(branch, mineExt, "mine") + " UNION ALL " + fmt.Sprintf(branch, "", "anyone") + " ORDER BY turn_seq LIMIT ?"
	return withMessages(page), append(append(mineArgs, anyArgs...), limit)
}

// terminalList is terminalStates as an SQL list of literals.
var terminalList = func() string {
	q := make([]string, 0, 4)
	for _, s := range terminalStates() {
		q = append(q, "'"+s+"'")
	}
	return "(" + strings.Join(q, ", ") + ")"
}()
