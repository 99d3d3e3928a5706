package services

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"parley/models"
)

// An ask that opens a thread writes four rows that name each other: the
// thread, its root message (the thread's id), the thread's first event
// (both ids) and the thread's update (the message's and the event's ids).
// Statement by statement that was a round trip each, six with BEGIN and
// the log position. On a pgAction, an ask whose answer nothing needs
// before COMMIT (openLater) takes two: BEGIN with the party's duplicate
// probe and the log position, then the four writes with COMMIT, each
// naming the rows before it through their sequences (currval, in the
// same transaction and so on the same connection, a pooler's too). The
// answer is shaped as the last insert's id is read.
//
// The thread's id is still taken by its insert, after every rule passed:
// a refused ask leaves no gap in the thread ids (nor in the messages').

// openLater reports whether an opening post may send all of its writes
// with COMMIT: on a pgAction, an act that changes no claim (an ask, not an
// assert) and carries no idempotency key (a keyed post stores its answer,
// ids included, before it commits).
func openLater(tx *gorm.DB, env Envelope, work claimWork) bool {
	return actionOf(tx) != nil && idAfterCommit(env, change{}, work)
}

// probeWithPosition is checkPartyDuplicate for a pgAction's opening post,
// with the action's first log position read in the same round trip (the
// one that carries BEGIN); nextSeq then hands that position out. An
// opening post takes no lock, so its transaction id may be taken first.
func (f *Forum) probeWithPosition(tx *gorm.DB, a *pgAction, who Caller, hash string, now time.Time) error {
	var pos int64
	posRead, err := passRow(tx, nextPosition, positionsPerTx)
	if err != nil {
		return err
	}
	posRead.scan = func(r pgx.Row) error { return scanKept(r, posRead.plans, &pos) }
	reads := []batchRead{posRead}
	p := f.partyProbe(who, hash, now)
	var earlier sql.NullInt64
	if p.n > 0 {
		probe, err := passRow(tx, partyRecentRow, p.args()...)
		if err != nil {
			return fmt.Errorf("guard: party bodies: %w", err)
		}
		probe.scan = func(r pgx.Row) error { return scanKept(r, probe.plans, &earlier) }
		reads = append(genericPlan(probe), posRead)
	}
	if err := a.send(tx.Statement.Context, reads, false); err != nil {
		return err
	}
	if s, ok := tx.Statement.Context.Value(sinkKey{}).(*sink); ok {
		s.early = earlyPosition{tx: a, pos: pos}
	}
	return f.partyDuplicate(tx, p, earlier.Int64)
}

// The writes of an opening post on a pgAction, each naming the rows
// inserted before it in the transaction through their sequences.
const (
	newThreadID  = "currval(pg_get_serial_sequence('threads', 'id'))"
	newMessageID = "currval(pg_get_serial_sequence('messages', 'id'))"
	newEventID   = "currval(pg_get_serial_sequence('events', 'id'))"
)

var (
	threadInsert = fixedSQL{postgres: numbered("INSERT INTO threads (" + strings.Join(threadColumns[1:], ", ") +
		") VALUES (?" + strings.Repeat(", ?", len(threadColumns)-2) + ") RETURNING id"), plans: new(planSlot)}
	rootInsert          = inNewThread(messageInsert)
	rootInsertOwnerless = inNewThread(messageInsertOwnerless)
	openEventInsert     = fixedSQL{postgres: numbered(`INSERT INTO events (seq, thread_id, type, from_state, to_state,
		origin, label, actor_identity, actor_extension, message_id, at, confirmed_at)
		VALUES (?, ` + newThreadID + `, ?, ?, ?, ?, ?, ?, ?, ` + newMessageID + `, ?, ?) RETURNING id`), plans: new(planSlot)}
	// openedThreadUpdate is threadUpdate of the thread just inserted, its
	// root and turn the message just inserted and its state's and record's
	// event the event just inserted; its arguments are threadUpdate's without those
	// and the id (openedArgs).
	openedThreadUpdate = fixedSQL{postgres: numbered(strings.NewReplacer(
		"root_message_id = ?", "root_message_id = "+newMessageID,
		"state_event_id = ?", "state_event_id = "+newEventID,
		"record_event_id = ?", "record_event_id = "+newEventID,
		"turn_message_id = ?", "turn_message_id = "+newMessageID,
		"WHERE id = ?", "WHERE id = (SELECT "+newThreadID+")").Replace(threadUpdate.sqlite)), plans: new(planSlot)}
)

// inNewThread is a message insert whose thread is the one this
// transaction inserted last; its arguments are s's without thread_id.
func inNewThread(s fixedSQL) fixedSQL {
	return fixedSQL{postgres: numbered(strings.Replace(s.sqlite, "VALUES (?", "VALUES ("+newThreadID, 1)), plans: new(planSlot)}
}

// openedArgs are openedThreadUpdate's arguments: th's values without
// those its sequences name.
func openedArgs(th *models.Thread) []any {
	vals := threadValues(th)
	out := vals[:0]
	for i, v := range vals {
		switch threadColumns[i+1] {
		case "root_message_id", "state_event_id", "record_event_id", "turn_message_id":
			continue
		}
		out = append(out, v)
	}
	return out
}

// queueAnswered queues s with args on a, through GORM's row callbacks
// (passRow), to be sent with the action's next round trip, which scans
// the one column it returns into id and then calls done.
func queueAnswered(tx *gorm.DB, a *pgAction, s fixedSQL, args []any, id *int64, done func() error) error {
	r, err := passRow(tx, s, args...)
	if err != nil {
		return err
	}
	a.queue = append(a.queue, queuedWrite{sql: r.sql, args: r.args, rows: -1, answer: func(row pgx.Row) error {
		if err := scanKept(row, r.plans, id); err != nil {
			return err
		}
		return done()
	}})
	return nil
}

// openThreadLater is openThread's writes on a pgAction (openLater), once
// its rules passed: th, msg and the opening event ev, all of whose fields
// but the ids are final, are queued for COMMIT's round trip; *out is the
// answer, shaped once the event's id is read.
func (f *Forum) openThreadLater(tx *gorm.DB, a *pgAction, th *models.Thread, msg *models.Message, ev *models.Event, now time.Time, out *Posted) error {
	noop := func() error { return nil }
	if err := queueAnswered(tx, a, threadInsert, threadValues(th), &th.ID, noop); err != nil {
		return fmt.Errorf("insert thread: %w", err)
	}
	root := rootInsert
	if msg.AuthorOwner == "" {
		root = rootInsertOwnerless // as messageInsertOf chooses
	}
	_, args := messageInsertOf(msg)
	if err := queueAnswered(tx, a, root, slices.Delete(args, 0, 1), &msg.ID, noop); err != nil {
		return fmt.Errorf("insert message: %w", err)
	}
	evArgs := []any{ev.Seq, ev.Type, ev.FromState, ev.ToState, ev.Origin, ev.Label, ev.ActorIdentity, ev.ActorExtension, ev.At, ev.ConfirmedAt}
	shape := func() (err error) {
		msg.ThreadID, ev.ThreadID, ev.MessageID = th.ID, th.ID, &msg.ID
		th.RootMessageID, th.StateEventID, th.RecordEventID, th.TurnMessageID = msg.ID, ev.ID, ev.ID, msg.ID
		*out, err = f.posted(tx, *msg, *th, now)
		return err
	}
	if err := queueAnswered(tx, a, openEventInsert, evArgs, &ev.ID, shape); err != nil {
		return fmt.Errorf("insert event: %w", err)
	}
	if _, err := openedThreadUpdate.execLater(tx, 1, openedArgs(th)...); err != nil {
		return fmt.Errorf("update thread: %w", err)
	}
	return nil
}
