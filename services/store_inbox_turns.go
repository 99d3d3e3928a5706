package services

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

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
// The page sizes are literals too: with LIMIT as a parameter, a generic
// plan guesses a tenth of the inbox and picks a parallel scan (50 ms at a
// million messages); written in, the statement is planned once per
// connection and page size (see genericPlanPG).
//
// The addressed view (addressed set) is the first branch alone: one range
// of threads_inbox, the caller's identity's, walked in turn order and cut
// after limit rows — however many turns await anyone, it never reads them.
func (f *Forum) inboxTurns(ctx context.Context, who Caller, ext string, since int64, limit int, addressed bool, horizon *int64) ([]turnRow, error) {
	sql, args := inboxTurnsSQL(who, ext, since, limit, addressed)
	if models.IsPostgresDB(f.db) {
		rows, ok, err := f.inboxTurnsPgx(ctx, inboxTurnsText(ext != "", limit, addressed).postgres, args, limit, horizon)
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

// inboxTurnsPgx sends the page's statement (sql, numbered for PostgreSQL)
// to pgx in one batch behind
// genericPlanPG and, when horizon is not nil, the horizon's statement,
// sets *horizon and answers the page; ok is false when pgx is out of
// reach (see onPgx).
func (f *Forum) inboxTurnsPgx(ctx context.Context, sql string, args []any, limit int, horizon *int64) (rows []turnRow, ok bool, err error) {
	ok, err = onPgx(ctx, f.db.WithContext(ctx), func(c *pgx.Conn) error {
		var b pgx.Batch
		b.Queue(genericPlanPG)
		if horizon != nil {
			b.Queue(horizonPG, positionsPerTx)
		}
		b.Queue(sql, args...)
		br := c.SendBatch(ctx, &b)
		defer br.Close()
		if _, err := br.Exec(); err != nil {
			return err
		}
		if horizon != nil {
			if err := br.QueryRow().Scan(horizon); err != nil {
				return err
			}
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

// genericPlanPG has PostgreSQL run the rest of a pgx batch (one implicit
// transaction: the batch ends in one Sync) on the generic plans of its
// prepared statements. The inbox's statement is the same text for every
// caller (its page sizes are literals), and its generic plan walks
// threads_inbox as the custom ones do; but PostgreSQL's plan cache
// compares the generic plan's estimated cost with the custom plans' and,
// on a populated forum, kept planning the statement anew on every call:
// 1–1.5 ms of planning for 0.4 ms of execution. set_config(..., true) lasts
// the transaction, so it holds behind a pooler in transaction mode too,
// and leaves the connection as it found it. Through a pooler the
// statement is sent unnamed (cache_describe) and planned per call anyway.
const genericPlanPG = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true)"

// horizonPG is horizonSQL as pgx takes it.
var horizonPG = numbered(horizonSQL)

func inboxTurnsSQL(who Caller, ext string, since int64, limit int, addressed bool) (string, []any) {
	text := inboxTurnsText(ext != "", limit, addressed)
	args := []any{who.Identity}
	if ext != "" {
		args = append(args, "", ext)
	}
	args = append(args, since, who.Identity, ext)
	if !addressed {
		args = append(args, anyone.identity, since, who.Identity, ext)
	}
	return text.sqlite, args
}

// inboxTexts are the inbox statement's texts by their shape (inboxShape):
// a few hundred at most (page sizes are bounded), each built once. Built
// on every call, and renumbered for PostgreSQL rune by rune, they were the
// most of an inbox call's allocations.
var inboxTexts sync.Map // inboxShape → fixedSQL

// inboxShape is what the inbox statement's text depends on.
type inboxShape struct {
	extension, addressed bool
	limit                int
}

// inboxTurnsText is the inbox statement's text for its shape, with ?
// (SQLite) and $n (PostgreSQL) placeholders; inboxTurnsSQL gives the
// arguments in their order.
func inboxTurnsText(extension bool, limit int, addressed bool) fixedSQL {
	key := inboxShape{extension, addressed, limit}
	if text, ok := inboxTexts.Load(key); ok {
		return text.(fixedSQL)
	}
	branch := `SELECT * FROM (SELECT ` + qualified("threads", threadColumns) + ` FROM threads
		JOIN messages turn ON turn.id = threads.turn_message_id
		WHERE threads.awaiting_identity = ? %s AND threads.turn_seq > ?
		  AND threads.record_state NOT IN ` + terminalList + `
		  AND NOT (turn.author_identity = ? AND turn.author_extension = ?)
		ORDER BY threads.turn_seq LIMIT ` + strconv.Itoa(limit) + `) %s`
	mineExt := ""
	if extension {
		// From an extension, a turn addressed to another extension of the
		// caller's identity is not its own (see Inbox).
		mineExt = "AND threads.awaiting_extension IN (?, ?)"
	}
	// The page's turn messages join it once it is cut to limit rows: the
	// branches' rows, twice as many, carry no message bodies.
	withMessages := func(page string) string {
		return "WITH page AS (" + page + ") SELECT page.*, " + turnColumns +
			" FROM page JOIN messages turn ON turn.id = page.turn_message_id ORDER BY page.turn_seq"
	}
	page := fmt.Sprintf(branch, mineExt, "mine")
	if !addressed {
		page += " UNION ALL " + fmt.Sprintf(branch, "", "anyone") + " ORDER BY turn_seq LIMIT " + strconv.Itoa(limit)
	}
	text := fixed(withMessages(page))
	inboxTexts.Store(key, text)
	return text
}

// terminalList is terminalStates as an SQL list of literals.
var terminalList = func() string {
	q := make([]string, 0, 4)
	for _, s := range terminalStates() {
		q = append(q, "'"+s+"'")
	}
	return "(" + strings.Join(q, ", ") + ")"
}()
