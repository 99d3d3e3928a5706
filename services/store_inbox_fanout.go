package services

import (
	"context"
	"encoding/json"
	"fmt"

	"parley/models"
)

// fanoutTurns reads, for a fan-out round (inbox_fanout.go), the open turns
// at or above from that await one of identities ("*" among them for
// anyone), in threads whose state of record is not terminal, in turn
// order, at most fanoutRows, each with its turn message. upTo is the
// position below which the answer holds every such turn: the log's horizon
// (settleWith: rows above it are not final yet, and are left for a later
// read), or the position after the last row of a read cut at fanoutRows.
//
// The identities travel as one JSON parameter, however many waiters the
// round serves; each is a range of the inbox index threads_inbox (from
// onwards), as the inbox's own branches are.
func (f *Forum) fanoutTurns(ctx context.Context, from int64, identities []string) (rows []turnRow, upTo int64, err error) {
	list, err := json.Marshal(identities)
	if err != nil {
		return nil, 0, err
	}
	among := "threads.awaiting_identity IN (SELECT value FROM json_each(?))"
	if models.IsPostgresDB(f.db) {
		among = "threads.awaiting_identity = ANY (ARRAY(SELECT jsonb_array_elements_text(CAST(? AS jsonb))))"
	}
	sql := `SELECT ` + qualified("threads", threadColumns) + `, ` + turnColumns + ` FROM threads
		JOIN messages turn ON turn.id = threads.turn_message_id
		WHERE ` + among + ` AND threads.turn_seq >= ?
		  AND threads.record_state NOT IN ` + terminalList + `
		ORDER BY threads.turn_seq LIMIT ?`
	keep, err := f.settleWith(ctx, func(horizon *int64) ([]int64, error) {
		// The horizon before the rows, on both databases: on SQLite it
		// is the committed counter's next value, for upTo.
		h, err := f.horizon(ctx)
		if err != nil {
			return nil, err
		}
		got, err := rowsOf(f.db.WithContext(ctx).Raw(sql, string(list), from, fanoutRows), fanoutRows, turnFields)
		if err != nil {
			return nil, fmt.Errorf("inbox fan-out: %w", err)
		}
		if horizon != nil {
			*horizon = h
		}
		rows, upTo = got, h
		pos := make([]int64, len(rows))
		for i, r := range rows {
			pos[i] = r.thread.TurnSeq
		}
		return pos, nil
	})
	if err != nil {
		return nil, 0, err
	}
	if keep == fanoutRows {
		upTo = min(upTo, rows[keep-1].thread.TurnSeq+1)
	}
	// On SQLite nothing is held back: rows above the horizon read before
	// them committed in order, and are shown.
	rows = rows[:keep]
	if len(rows) > 0 {
		upTo = max(upTo, rows[len(rows)-1].thread.TurnSeq+1)
	}
	return rows, upTo, nil
}
