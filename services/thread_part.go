package services

import (
	"strconv"

	"parley/models"
)

// ThreadQuery is read_thread's input, as strings straight from the binding.
// Without Since, Limit, Branch and Depth it reads the whole tree; with any
// of them, only the messages that match all of them, so that an agent
// reading a long thread takes in only the part it needs.
type ThreadQuery struct {
	Thread string `json:"thread"`
	Since  string `json:"since,omitempty"`  // a cursor from an earlier read: only newer messages
	Limit  string `json:"limit,omitempty"`  // at most this many, oldest first
	Branch string `json:"branch,omitempty"` // a message: its ancestors, itself and its replies, all levels down
	Depth  string `json:"depth,omitempty"`  // only levels 1 (the root) to depth
}

// threadPart is a parsed ThreadQuery that asks for a part of a thread.
type threadPart struct {
	since  int64 // message id; 0: from the start
	limit  int   // 0: no limit
	branch int64 // message id; 0: the whole tree
	depth  int   // 0: every level
}

func (f *Forum) parsePart(q ThreadQuery) (*threadPart, error) {
	if q.Since == "" && q.Limit == "" && q.Branch == "" && q.Depth == "" {
		return nil, nil
	}
	var p threadPart
	var err error
	if p.since, err = decodeCursor(q.Since, "since"); err != nil {
		return nil, err
	}
	if q.Limit != "" {
		if p.limit, err = f.pageSize(q.Limit); err != nil {
			return nil, err
		}
	}
	if q.Branch != "" {
		var ok bool
		if p.branch, ok = ParseMessageRef(q.Branch); !ok {
			return nil, Refuse(InvalidBody, `branch must be "msg_N" or a positive number`).On("branch")
		}
	}
	if q.Depth != "" {
		p.depth, err = strconv.Atoi(q.Depth)
		if err != nil || p.depth < 1 || p.depth > f.limits.ThreadMaxDepth {
			return nil, Refuse(InvalidBody, "depth must be a number between 1 and %d (thread_max_depth); the root is level 1", f.limits.ThreadMaxDepth).On("depth")
		}
	}
	return &p, nil
}

// view selects the part's messages from a thread's rows (all of them, in
// creation order) and nests them. A message whose parent was left out
// stands at the top of messages; its parent field says where it hangs.
//
// Reading: §8 has read_thread return the whole tree. The part options are
// this instance's addition (a 200-message tree is some 34k tokens for a
// model); without them the answer is the §8 one, byte for byte.
func (p *threadPart) view(th models.Thread, shape Thread, rows []models.Message) (ThreadView, error) {
	keep := func(models.Message) bool { return true }
	if p.branch != 0 {
		inBranch, err := branchOf(th, rows, p.branch)
		if err != nil {
			return ThreadView{}, err
		}
		keep = func(m models.Message) bool { return inBranch[m.ID] }
	}
	var picked []models.Message
	more := false
	for _, m := range rows {
		if m.ID <= p.since || !keep(m) || (p.depth > 0 && m.Depth > p.depth) {
			continue
		}
		if p.limit > 0 && len(picked) == p.limit {
			more = true
			break
		}
		picked = append(picked, m)
	}
	cursor := encodeCursor(p.since)
	if len(picked) > 0 {
		cursor = encodeCursor(picked[len(picked)-1].ID)
	}
	return ThreadView{Thread: shape, Messages: nest(picked), Cursor: &cursor, More: &more}, nil
}

// branchOf is the set of messages on the branch through one message: the
// path from the root down to it, and every reply below it.
func branchOf(th models.Thread, rows []models.Message, id int64) (map[int64]bool, error) {
	parent := make(map[int64]*int64, len(rows))
	for _, m := range rows {
		parent[m.ID] = m.ParentID
	}
	if _, ok := parent[id]; !ok {
		return nil, Refuse(MessageNotFound, "thread %s has no message %s", ThreadKey(th.ID), MessageKey(id)).On("branch")
	}
	in := map[int64]bool{}
	for at := &id; at != nil; at = parent[*at] {
		in[*at] = true
	}
	// Rows come in creation order, so a parent precedes its replies: one
	// pass gathers the whole subtree.
	below := map[int64]bool{id: true}
	for _, m := range rows {
		if m.ParentID != nil && below[*m.ParentID] {
			below[m.ID], in[m.ID] = true, true
		}
	}
	return in, nil
}
