package services

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"parley/models"
)

// A post's own rows — the thread it writes and its parent — are read and
// written with fixed statements scanned by hand, through the action's
// transaction. (The message itself is still inserted by GORM's Create:
// tests of every binding inject faults into that step through GORM's
// create callbacks.) GORM's generic path (statement building, reflection
// on every field of a row) was half of a post's CPU in --pprof. The
// statements still go through GORM's Raw and Row, so they run in the same
// transaction and its callbacks see them. Both dialects accept them.

// threadColumns are every column of threads in the order scanThread scans
// them (a test checks them against models.Thread).
var threadColumns = []string{"id", "title", "root_message_id",
	"state", "state_origin", "state_confirmed_at", "state_label", "state_event_id",
	"record_state", "record_origin", "record_label", "record_confirmed_at", "record_confirmed_by", "record_event_id",
	"awaiting_identity", "awaiting_extension", "turn_message_id", "turn_seq", "activity_seq",
	"model_run", "reply_by", "escalated_at",
	"created_by_identity", "created_by_extension", "message_count", "created_at", "updated_at"}

var threadSelect = "SELECT " + strings.Join(threadColumns, ", ") + " FROM threads"

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
	if err := scanRow(db.Raw(threadSelect+" WHERE id = ?", id), threadFields(&th)...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return th, gorm.ErrRecordNotFound
		}
		return th, err
	}
	return th, nil
}

var threadUpdate = func() string {
	sets := make([]string, 0, len(threadColumns)-1)
	for _, c := range threadColumns[1:] {
		sets = append(sets, c+" = ?")
	}
	return "UPDATE threads SET " + strings.Join(sets, ", ") + " WHERE id = ?"
}()

// saveThread writes every column of an existing thread, as GORM's Save did.
func saveThread(tx *gorm.DB, th *models.Thread) error {
	vals := []any{th.Title, th.RootMessageID,
		th.State, th.StateOrigin, th.StateConfirmedAt, th.StateLabel, th.StateEventID,
		th.RecordState, th.RecordOrigin, th.RecordLabel, th.RecordConfirmedAt, th.RecordConfirmedBy, th.RecordEventID,
		th.AwaitingIdentity, th.AwaitingExtension, th.TurnMessageID, th.TurnSeq, th.ActivitySeq,
		th.ModelRun, th.ReplyBy, th.EscalatedAt,
		th.CreatedByIdentity, th.CreatedByExtension, th.MessageCount, th.CreatedAt, th.UpdatedAt, th.ID}
	res := tx.Exec(threadUpdate, vals...)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("thread %d: %d rows updated", th.ID, res.RowsAffected)
	}
	return nil
}

// messageFields are m's fields in messageColumns' order (treeColumns, then
// body_hash and chain_len).
func messageFields(m *models.Message) []any {
	return []any{&m.ID, &m.ThreadID, &m.ParentID, &m.Depth, &m.Kind, &m.AuthorIdentity, &m.AuthorExtension,
		&m.AuthorKind, &m.AuthorBadge, &m.Body, &m.ProvenanceModel, &m.ProvenanceClient, &m.ToIdentity, &m.ToExtension,
		&m.State, &m.ClaimID, &m.AwaitingIdentity, &m.AwaitingExtension, &m.CreatedAt, &m.ReplyBy,
		&m.BodyHash, &m.ChainLen}
}

// readParentRow reads one message by id, every column but PostgreSQL's
// search vector, and beside it the body hashes of identity's last n
// messages in thread, newest first through messages_guard_bodies;
// gorm.ErrRecordNotFound when the message does not exist.
func readParentRow(db *gorm.DB, id, thread int64, identity string, n int) (models.Message, []string, error) {
	var m models.Message
	agg := "string_agg(body_hash, ',')" // hex digests: a comma never occurs in them
	if models.Dialect(db) != "postgres" {
		agg = "group_concat(body_hash, ',')"
	}
	var recent sql.NullString
	q := db.Raw("SELECT "+strings.Join(messageColumns, ", ")+", (SELECT "+agg+` FROM (SELECT body_hash FROM messages
		WHERE thread_id = ? AND author_identity = ? ORDER BY id DESC LIMIT ?) r) FROM messages WHERE id = ?`,
		thread, identity, max(n, 0), id)
	if err := scanRow(q, append(messageFields(&m), &recent)...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return m, nil, gorm.ErrRecordNotFound
		}
		return m, nil, err
	}
	var hashes []string
	if recent.Valid && recent.String != "" {
		hashes = strings.Split(recent.String, ",")
	}
	return m, hashes, nil
}

// scanRow runs a Raw statement that answers one row and scans it;
// sql.ErrNoRows when it answers none.
func scanRow(q *gorm.DB, dest ...any) error {
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
