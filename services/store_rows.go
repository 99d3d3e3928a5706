package services

import (
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"parley/models"
)

// A post's own rows — the thread it writes, its parent and the message
// itself — are read and written with fixed statements scanned by hand,
// through the action's transaction. GORM's generic path (statement
// building, reflection on every field of a row) was half of a post's CPU
// in --pprof. The statements run in the action's transaction, and pass
// GORM's row and raw callbacks whenever anything besides GORM's own is
// registered there (unobserved): the tests' fault injection and
// statement counts see them.

// fixedSQL is a statement written once with ? placeholders and kept in
// each dialect's own form. GORM's Raw and Exec rebuild a statement byte by
// byte and box each argument on every call — a fifth of a post's
// allocations in -memprofile; a fixed statement is handed to the driver
// as it is.
type fixedSQL struct {
	sqlite, postgres string
	plans            *planSlot // how its row is scanned (scanKept); nil: planned by pgx each time
}

// fixed makes a fixedSQL of one text for both dialects.
func fixed(sql string) fixedSQL {
	return fixedSQL{sqlite: sql, postgres: numbered(sql), plans: new(planSlot)}
}

// numbered writes PostgreSQL's $1, $2… for the ? placeholders of sql (the
// fixed statements hold no ? inside a literal).
func numbered(sql string) string {
	var b strings.Builder
	n := 0
	for _, r := range sql {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// on readies the statement on tx with args, for Row.
func (s fixedSQL) on(tx *gorm.DB, args ...any) *gorm.DB {
	q := tx.Raw("") // a statement of its own in tx's session
	text := s.sqlite
	if models.IsPostgresDB(tx) {
		text = s.postgres
	}
	q.Statement.SQL.WriteString(text)
	q.Statement.Vars = args
	return q
}

// exec runs the statement on tx with args, as Exec does.
func (s fixedSQL) exec(tx *gorm.DB, args ...any) *gorm.DB {
	q := s.on(tx, args...)
	return q.Callback().Raw().Execute(q)
}

// threadColumns are every column of threads in the order scanThread scans
// them (a test checks them against models.Thread).
var threadColumns = []string{"id", "title", "root_message_id",
	"state", "state_origin", "state_confirmed_at", "state_label", "state_event_id",
	"record_state", "record_origin", "record_label", "record_confirmed_at", "record_confirmed_by", "record_event_id",
	"awaiting_identity", "awaiting_extension", "turn_message_id", "turn_seq", "activity_seq",
	"model_run", "reply_by", "escalated_at",
	"created_by_identity", "created_by_extension", "message_count", "created_at", "updated_at"}

var (
	threadSelect = "SELECT " + strings.Join(threadColumns, ", ") + " FROM threads"
	threadByID   = fixed(threadSelect + " WHERE id = ?")
)

// threadFields are th's fields in threadColumns' order.
func threadFields(th *models.Thread) []any {
	return []any{&th.ID, &th.Title, &th.RootMessageID,
		&th.State, &th.StateOrigin, &th.StateConfirmedAt, &th.StateLabel, &th.StateEventID,
		&th.RecordState, &th.RecordOrigin, &th.RecordLabel, &th.RecordConfirmedAt, &th.RecordConfirmedBy, &th.RecordEventID,
		&th.AwaitingIdentity, &th.AwaitingExtension, &th.TurnMessageID, &th.TurnSeq, &th.ActivitySeq,
		&th.ModelRun, &th.ReplyBy, &th.EscalatedAt,
		&th.CreatedByIdentity, &th.CreatedByExtension, &th.MessageCount, &th.CreatedAt, &th.UpdatedAt}
}

// readThreadRow reads one thread by id; gorm.ErrRecordNotFound when none.
func readThreadRow(db *gorm.DB, id int64) (models.Thread, error) {
	var th models.Thread
	if err := scanFixed(db, threadByID, []any{id}, threadFields(&th)...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return th, gorm.ErrRecordNotFound
		}
		return th, err
	}
	return th, nil
}

var threadUpdate = func() fixedSQL {
	sets := make([]string, 0, len(threadColumns)-1)
	for _, c := range threadColumns[1:] {
		sets = append(sets, c+" = ?")
	}
	return fixed("UPDATE threads SET " + strings.Join(sets, ", ") + " WHERE id = ?")
}()

// threadUpdateTurnLater is threadUpdate naming as the thread's turn the
// message this transaction inserted last, through its sequence, for a
// message whose insert waits in the same batch (insertMessageLater): its
// id is not known when the update is queued. PostgreSQL only; its
// arguments are threadUpdate's without turn_message_id.
var threadUpdateTurnLater = fixedSQL{postgres: numbered(strings.Replace(threadUpdate.sqlite,
	"turn_message_id = ?", "turn_message_id = currval(pg_get_serial_sequence('messages', 'id'))", 1)), plans: new(planSlot)}

// turnArg is turn_message_id's place among saveThread's arguments.
var turnArg = slices.Index(threadColumns[1:], "turn_message_id")

// saveThread writes every column of an existing thread, as GORM's Save did;
// on a pgAction the update waits for the action's next round trip (the
// thread's row, locked, cannot vanish meanwhile; the count is checked when
// it is sent).
func saveThread(tx *gorm.DB, th *models.Thread) error {
	return saveThreadWith(tx, th, false)
}

// saveThreadTurnAt is saveThread for a thread whose turn moved to m
// (turnAtM): when m's insert still waits for the action's next round trip
// (m.ID 0), the update, queued behind it, names m through its sequence.
func saveThreadTurnAt(tx *gorm.DB, th *models.Thread, m *models.Message, turnAtM bool) error {
	if turnAtM && m.ID == 0 && actionOf(tx) != nil {
		return saveThreadWith(tx, th, true)
	}
	if turnAtM {
		th.TurnMessageID = m.ID // m may have been sent since the turn moved
	}
	return saveThread(tx, th)
}

// saveThreadWith is saveThread, through threadUpdateTurnLater when
// turnLater is set.
func saveThreadWith(tx *gorm.DB, th *models.Thread, turnLater bool) error {
	vals := threadValues(th, th.ID)
	s := threadUpdate
	if turnLater {
		s, vals = threadUpdateTurnLater, slices.Delete(vals, turnArg, turnArg+1)
	}
	rows, err := s.execLater(tx, 1, vals...)
	if err != nil {
		return err
	}
	if rows != 1 {
		return fmt.Errorf("thread %d: %d rows updated", th.ID, rows)
	}
	return nil
}

// threadValues are th's columns but its id, in threadColumns' order, and
// then tail (saveThread's id), in one slice.
func threadValues(th *models.Thread, tail ...any) []any {
	vals := append(make([]any, 0, len(threadColumns)-1+len(tail)), th.Title, th.RootMessageID,
		th.State, th.StateOrigin, th.StateConfirmedAt, th.StateLabel, th.StateEventID,
		th.RecordState, th.RecordOrigin, th.RecordLabel, th.RecordConfirmedAt, th.RecordConfirmedBy, th.RecordEventID,
		th.AwaitingIdentity, th.AwaitingExtension, th.TurnMessageID, th.TurnSeq, th.ActivitySeq,
		th.ModelRun, th.ReplyBy, th.EscalatedAt,
		th.CreatedByIdentity, th.CreatedByExtension, th.MessageCount, th.CreatedAt, th.UpdatedAt)
	return append(vals, tail...)
}

// messageFields are m's fields in messageColumns' order (treeColumns, then
// body_hash and chain_len).
func messageFields(m *models.Message) []any {
	return []any{&m.ID, &m.ThreadID, &m.ParentID, &m.Depth, &m.Kind, &m.AuthorIdentity, &m.AuthorExtension,
		&m.AuthorKind, &m.AuthorBadge, &m.Body, &m.ProvenanceModel, &m.ProvenanceClient, &m.ToIdentity, &m.ToExtension,
		&m.State, &m.ClaimID, &m.AwaitingIdentity, &m.AwaitingExtension, &m.CreatedAt, &m.ReplyBy, &m.AuthorOwner,
		&m.BodyHash, &m.ChainLen}
}

// parentWithRecent reads a message, the guard's recent body hashes
// (readParentRow) and the party's earlier message of the same body
// (partyRecent). The digests are hex: a comma never occurs in them.
var parentWithRecent = fixedSQL{sqlite: parentRowText("group_concat(body_hash, ',')", "?"),
	postgres: numbered(parentRowText("string_agg(body_hash, ',')", "?")), plans: new(planSlot)}

// parentRowText is parentWithRecent's text with agg for the aggregate of
// the hashes and id for the message's id (parentAheadRow names the root).
func parentRowText(agg, id string) string {
	return "SELECT " + strings.Join(messageColumns, ", ") + ", (SELECT " + agg + ` FROM (SELECT body_hash FROM messages
		WHERE thread_id = ? AND author_identity = ? ORDER BY id DESC LIMIT ?) r), ` + partyRecent + ` FROM messages WHERE id = ` + id
}

// readParentRow reads one message by id, every column but PostgreSQL's
// search vector, and beside it the body hashes of identity's last n
// messages in thread, newest first through messages_guard_bodies, and the
// id of the party's earlier message that probe finds (0 for none);
// gorm.ErrRecordNotFound when the message does not exist.
func readParentRow(db *gorm.DB, id, thread int64, identity string, n int, probe partyProbe) (models.Message, []string, int64, error) {
	var m models.Message
	var recent sql.NullString
	var earlier sql.NullInt64
	args := append(append([]any{thread, identity, max(n, 0)}, probe.args()...), id)
	if err := scanFixed(db, parentWithRecent, args, append(messageFields(&m), &recent, &earlier)...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return m, nil, 0, gorm.ErrRecordNotFound
		}
		return m, nil, 0, err
	}
	var hashes []string
	if recent.Valid && recent.String != "" {
		hashes = strings.Split(recent.String, ",")
	}
	return m, hashes, earlier.Int64, nil
}

// messageInsert stores a new message, every column of messageColumns but
// its id, which it answers.
var messageInsert = fixed("INSERT INTO messages (" + strings.Join(messageColumns[1:], ", ") +
	") VALUES (?" + strings.Repeat(", ?", len(messageColumns)-2) + ") RETURNING id")

// messageInsertOwnerless is messageInsert without author_owner, for a
// message stored without an owner (its default): today's code then still
// writes a forum at a schema before owners (the migration tests do).
var messageInsertOwnerless = func() fixedSQL {
	cols := slices.DeleteFunc(slices.Clone(messageColumns[1:]), func(c string) bool { return c == "author_owner" })
	return fixed("INSERT INTO messages (" + strings.Join(cols, ", ") + ") VALUES (?" + strings.Repeat(", ?", len(cols)-1) + ") RETURNING id")
}()

// insertMessage stores m and sets its id.
func insertMessage(tx *gorm.DB, m *models.Message) error {
	s, args := messageInsertOf(m)
	return scanFixed(tx, s, args, &m.ID)
}

// insertMessageLater is insertMessage for an action that needs m's id
// only once it commits (idAfterCommit): on a pgAction the insert waits
// for the action's next round trip, which is COMMIT's when nothing reads
// in between, and sets m.ID and calls done then: the reply is a round
// trip shorter. Elsewhere it runs at once, and done with it.
func insertMessageLater(tx *gorm.DB, m *models.Message, done func()) error {
	a := actionOf(tx)
	if a == nil {
		if err := insertMessage(tx, m); err != nil {
			return err
		}
		done()
		return nil
	}
	s, args := messageInsertOf(m)
	r, err := passRow(tx, s, args...)
	if err != nil {
		return err
	}
	a.queue = append(a.queue, queuedWrite{sql: r.sql, args: r.args, rows: -1, answer: func(row pgx.Row) error {
		if err := scanKept(row, r.plans, &m.ID); err != nil {
			return err
		}
		done()
		return nil
	}})
	return nil
}

// messageInsertOf is the statement that stores m, and its arguments.
func messageInsertOf(m *models.Message) (fixedSQL, []any) {
	if m.AuthorOwner == "" {
		return messageInsertOwnerless, []any{m.ThreadID, m.ParentID, m.Depth, m.Kind, m.AuthorIdentity, m.AuthorExtension,
			m.AuthorKind, m.AuthorBadge, m.Body, m.ProvenanceModel, m.ProvenanceClient, m.ToIdentity, m.ToExtension,
			m.State, m.ClaimID, m.AwaitingIdentity, m.AwaitingExtension, m.CreatedAt, m.ReplyBy,
			m.BodyHash, m.ChainLen}
	}
	return messageInsert, []any{m.ThreadID, m.ParentID, m.Depth, m.Kind, m.AuthorIdentity, m.AuthorExtension,
		m.AuthorKind, m.AuthorBadge, m.Body, m.ProvenanceModel, m.ProvenanceClient, m.ToIdentity, m.ToExtension,
		m.State, m.ClaimID, m.AwaitingIdentity, m.AwaitingExtension, m.CreatedAt, m.ReplyBy, m.AuthorOwner,
		m.BodyHash, m.ChainLen}
}

// qualified is cols qualified by a table's name or alias.
func qualified(alias string, cols []string) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = alias + "." + c
	}
	return strings.Join(out, ", ")
}

// messageRows reads every row q answers, its columns in messageColumns'
// order; hint is how many to expect. GORM's reflective scan was a fifth of
// an inbox's CPU in --pprof.
func messageRows(q *gorm.DB, hint int) ([]models.Message, error) {
	return rowsOf(q, hint, messageFields)
}

func rowsOf[T any](q *gorm.DB, hint int, fields func(*T) []any) ([]T, error) {
	rows, err := q.Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]T, 0, capHint(hint))
	for rows.Next() {
		var zero T
		out = append(out, zero)
		if err := rows.Scan(fields(&out[len(out)-1])...); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}

// scanRow runs a Raw statement that answers one row and scans it;
// sql.ErrNoRows when it answers none. In a pgAction it goes to pgx in one
// batch with whatever waits (scanBatched): database/sql's path through
// the held connection cost a post's insert a fifth more server CPU.
func scanRow(q *gorm.DB, dest ...any) error {
	if a := actionOf(q); a != nil {
		return scanBatched(q, a, false, dest...)
	}
	return scanOne(q, dest...)
}

// scanFixed is scanRow for s with args on tx: in a pgAction through
// passRow (without GORM when nothing observes its callbacks).
func scanFixed(tx *gorm.DB, s fixedSQL, args []any, dest ...any) error {
	return scanFixedPlan(tx, s, args, false, dest...)
}

// scanFixedPlan is scanFixed, on a pgAction under a generic plan when
// generic is set.
func scanFixedPlan(tx *gorm.DB, s fixedSQL, args []any, generic bool, dest ...any) error {
	if a := actionOf(tx); a != nil {
		r, err := passRow(tx, s, args...)
		if err != nil {
			return err
		}
		return a.scan(tx.Statement.Context, r, generic, dest...)
	}
	return scanOne(s.on(tx, args...), dest...)
}

// scanOne is scanRow outside a pgAction.
func scanOne(q *gorm.DB, dest ...any) error {
	row := q.Row()
	if q.Error != nil {
		if row != nil {
			_ = row.Scan() // closes its rows
		}
		return q.Error
	}
	if row == nil {
		return errors.New("no row answered")
	}
	return row.Scan(dest...)
}
