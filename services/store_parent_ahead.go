package services

import (
	"database/sql"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"parley/models"
)

// A reply reads its parent, with the guard's look-backs (readParentRow),
// in the round trip that takes the thread's lock (lockThreadBatched)
// rather than in one of its own: the reply asks for it ahead
// (readParentAhead), before it knows the thread's root, and findParent
// takes what was read. The statement names the parent by id, or the
// thread's root by the thread (parentAheadRow): the root never changes.
//
// Reading: the party probe's window (docs/protocol.md §14 rule 1, within
// guard_duplicate_window_hours) is then measured from the moment the
// batch is sent, not from the message's time, which is read once the lock
// is held: the two differ by the lock's wait (milliseconds; nothing under
// a test's clock).

// parentAhead is a reply's request for its parent and what the batch read.
type parentAhead struct {
	thread, id int64 // id 0: the thread's root
	identity   string
	n          int
	probe      partyProbe
	question   bool // an answer: read the chain questionAbove walks too

	sent    bool
	found   bool
	parent  models.Message
	recent  sql.NullString
	earlier sql.NullInt64
	chain   questionChain
}

// questionChain is the chain above a parent that questionAbove walks,
// read ahead in the lock's batch for an answer (questionChainAhead).
type questionChain struct {
	read   bool
	parent int64 // the message the chain was read from
	chain  []models.Message
}

// questionChainAhead is questionAbove's chain as the lock's batch reads
// it: from the parent parentAheadRow names up to the root, the asks,
// clarifies and answers in depth order, as one row of arrays (a batch
// reads one row a statement); all NULL when the parent does not exist.
var questionChainAhead = fixedSQL{postgres: `WITH RECURSIVE chain AS (
		SELECT id, parent_id, kind, depth, author_identity, author_extension FROM messages
		WHERE id = COALESCE(NULLIF($1::bigint, 0), (SELECT root_message_id FROM threads WHERE id = $2))
		UNION ALL
		SELECT m.id, m.parent_id, m.kind, m.depth, m.author_identity, m.author_extension
		FROM messages m JOIN chain c ON m.id = c.parent_id)
	SELECT array_agg(id ORDER BY depth), array_agg(COALESCE(parent_id, 0) ORDER BY depth),
		array_agg(kind ORDER BY depth), array_agg(depth ORDER BY depth),
		array_agg(author_identity ORDER BY depth), array_agg(author_extension ORDER BY depth)
	FROM chain WHERE kind IN ('` + string(Ask) + `', '` + string(Clarify) + `', '` + string(Answer) + `')`,
	plans: new(planSlot)}

var parentAheadRow = fixedSQL{postgres: numbered(parentRowText("string_agg(body_hash, ',')",
	"COALESCE(NULLIF(?::bigint, 0), (SELECT root_message_id FROM threads WHERE id = ?))")), plans: new(planSlot)}

// parentAheadRowRestoring is parentAheadRow planned under the generic plan
// that the lock's statement set (lockGenericOn), which it then ends: the
// last column puts the session's plan_cache_mode back as genericPlan's
// closing statement would, and runs after the statement was planned. Two
// statements fewer in the lock's batch than genericPlan's brackets. When
// the parent is not found no row runs it, and the mode stays generic until
// the transaction ends — which it then does, refused.
var parentAheadRowRestoring = fixedSQL{postgres: strings.Replace(parentAheadRow.postgres, " FROM messages WHERE id = ",
	", "+genericOffSQL+" FROM messages WHERE id = ", 1), plans: new(planSlot)}

// readParentAhead asks the lock of env's thread, on a pgAction, to read
// the parent too (none for a claim act, whose parent comes from its claim).
func (f *Forum) readParentAhead(tx *gorm.DB, who Caller, env Envelope, hash string) {
	s, ok := tx.Statement.Context.Value(sinkKey{}).(*sink)
	if !ok || actionOf(tx) == nil || claimAct(env.Kind) {
		return
	}
	s.ahead = &parentAhead{thread: env.ThreadID, id: env.ParentID, identity: who.Identity,
		n: max(f.limits.GuardRecentBodies, 0), probe: f.partyProbe(who, hash, f.timestamp()),
		question: env.Kind == Answer}
}

// batchReads is the request as statements of the lock's batch, which must
// have set a generic plan before them (lockGenericOn): the parent, and
// for an answer the chain above it.
func (p *parentAhead) batchReads(tx *gorm.DB) ([]batchRead, error) {
	args := append(append([]any{p.thread, p.identity, p.n}, p.probe.args()...), p.id, p.thread)
	r, err := passRow(tx, parentAheadRowRestoring, args...)
	if err != nil {
		return nil, err
	}
	r.scan = func(row pgx.Row) error {
		err := scanKept(row, r.plans, append(messageFields(&p.parent), &p.recent, &p.earlier, nil)...)
		p.found = err == nil
		return err
	}
	reads := []batchRead{r}
	if p.question {
		q, err := passRow(tx, questionChainAhead, p.id, p.thread)
		if err != nil {
			return nil, err
		}
		q.scan = func(row pgx.Row) error { return p.chain.scan(row, q.plans) }
		reads = append(reads, q)
	}
	p.sent = true
	return reads, nil
}

// scan reads questionChainAhead's row.
func (c *questionChain) scan(row pgx.Row, plans *planSlot) error {
	var ids, parents []int64
	var kinds, authors, extensions []string
	var depths []int32
	if err := scanKept(row, plans, &ids, &parents, &kinds, &depths, &authors, &extensions); err != nil {
		return err
	}
	if len(parents) != len(ids) || len(kinds) != len(ids) || len(depths) != len(ids) ||
		len(authors) != len(ids) || len(extensions) != len(ids) {
		return errors.New("question chain: arrays of unequal length")
	}
	c.chain = make([]models.Message, len(ids))
	for i := range ids {
		m := models.Message{ID: ids[i], Kind: kinds[i], Depth: int(depths[i]), AuthorIdentity: authors[i], AuthorExtension: extensions[i]}
		if parents[i] != 0 {
			m.ParentID = &parents[i]
		}
		c.chain[i] = m
	}
	c.read = true // takeParentAhead names the parent it was read from
	return nil
}

// takeParentAhead answers what the batch read for findParent's arguments,
// or false when it read nothing for them.
func takeParentAhead(tx *gorm.DB, thread, id int64, identity string, n int, probe partyProbe) (models.Message, []string, int64, bool, error) {
	s, ok := tx.Statement.Context.Value(sinkKey{}).(*sink)
	if !ok || s.ahead == nil || !s.ahead.sent {
		return models.Message{}, nil, 0, false, nil
	}
	p := s.ahead
	s.ahead = nil
	if p.thread != thread || p.id != id || p.identity != identity || p.n != max(n, 0) ||
		p.probe.party != probe.party || p.probe.n != probe.n || p.probe.hash != probe.hash {
		return models.Message{}, nil, 0, false, nil
	}
	if !p.found {
		return p.parent, nil, 0, true, gorm.ErrRecordNotFound
	}
	if p.chain.read {
		p.chain.parent = p.parent.ID
		s.chain = p.chain
	}
	var hashes []string
	if p.recent.Valid && p.recent.String != "" {
		hashes = strings.Split(p.recent.String, ",")
	}
	return p.parent, hashes, p.earlier.Int64, true, nil
}

// takeQuestionChain answers the chain the lock's batch read above parent
// for questionAbove, once, or false when it read none for parent.
func takeQuestionChain(tx *gorm.DB, parent int64) ([]models.Message, bool) {
	s, ok := tx.Statement.Context.Value(sinkKey{}).(*sink)
	if !ok || !s.chain.read || s.chain.parent != parent {
		return nil, false
	}
	chain := s.chain.chain
	s.chain = questionChain{}
	return chain, true
}
