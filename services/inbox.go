package services

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"parley/models"
)

// InboxQuery is the inbox's input, as strings straight from the binding.
type InboxQuery struct {
	Extension string `json:"extension,omitempty"`
	Since     string `json:"since,omitempty"`
	Limit     string `json:"limit,omitempty"`
	Wait      string `json:"wait,omitempty"`      // seconds to wait for a turn (§13)
	Addressed string `json:"addressed,omitempty"` // "true": only the turns that name the caller (§8, errata 2)
}

// InboxItem is one thread awaiting the caller, with the message whose turn
// is open.
type InboxItem struct {
	Thread  Thread   `json:"thread"`
	Message *Message `json:"message"`

	position int64       // the turn's log position, for streams
	shared   *sharedJSON // set for the items of a fan-out round
}

// sharedJSON is the encoding of an item shown to many waiters: a fan-out
// round hands one item to thousands of woken calls, which each encoded
// it anew (a quarter of a wake's server CPU, issue 31 item 3).
type sharedJSON struct {
	once sync.Once
	b    []byte
	err  error
}

// MarshalJSON encodes the page as its fields say (TestInboxEncoding holds
// it to encoding/json's reading of them): AppendJSON.
func (b Inbox) MarshalJSON() ([]byte, error) { return b.AppendJSON(nil) }

// AppendJSON appends the page's encoding to dst, without a walk by
// reflection of its items, each of which encodes itself once for all the
// waiters of a fan-out round: a fan-out answers thousands of pages at
// once, each into the buffer its answer is written from.
func (b Inbox) AppendJSON(dst []byte) ([]byte, error) {
	if b.Items == nil {
		enc, err := json.Marshal(inboxFields(b))
		return append(dst, enc...), err
	}
	dst = append(dst, `{"items":[`...)
	for i, it := range b.Items {
		enc, err := it.MarshalJSON()
		if err != nil {
			return nil, err
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, enc...)
	}
	dst, err := appendJSONString(append(dst, `],"cursor":`...), b.Cursor)
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// appendJSONString appends s as encoding/json writes it: quoted as it is
// when it holds nothing to escape (a cursor never does), else by
// json.Marshal.
func appendJSONString(dst []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			enc, err := json.Marshal(s)
			return append(dst, enc...), err
		}
	}
	return append(append(append(dst, '"'), s...), '"'), nil
}

// inboxFields and inboxItemFields are Inbox and InboxItem without their
// MarshalJSON.
type inboxFields Inbox
type inboxItemFields InboxItem

// MarshalJSON encodes the item as its fields say, once for all the
// waiters of a fan-out round.
func (it InboxItem) MarshalJSON() ([]byte, error) {
	if it.shared == nil {
		return json.Marshal(inboxItemFields(it))
	}
	it.shared.once.Do(func() { it.shared.b, it.shared.err = json.Marshal(inboxItemFields(it)) })
	return it.shared.b, it.shared.err
}

// Inbox answers inbox. Cursor always marks a position: pass it back as
// since to receive only what is new.
type Inbox struct {
	Items  []InboxItem `json:"items"`
	Cursor string      `json:"cursor"`
}

// Inbox lists the threads awaiting a reply from the caller (docs/protocol.md §8):
// those whose awaiting names the caller's identity or anyone, oldest turn
// first, never with a terminal state of record (§5.2: a pending proposal
// hides nothing). For a human or a lock holder it also lists the threads
// that escalated (§14 rule 4), whoever they await, until their turn moves.
//
// Reading: "hidden questions" are turns opened by the caller itself — by
// the identity with the given extension, or with no extension when none is
// given — since replying to them would be a self_reply. With an extension,
// turns addressed to another extension of the same identity are hidden too.
//
// Reading: an escalated thread is in the inbox of humans and lock holders
// whatever its awaiting and the extension given, except that its turn is
// hidden from the ask's own author as every own question is: the asker
// knows it went unanswered, and the Overdue page shows it to all.
//
// With addressed=true (errata 2) it is the addressed view: the same turns
// less those awaiting anyone — so the turns awaiting the caller's identity,
// its extension's or none, and for a human or a lock holder the escalated
// threads, whoever they await (§8 names them in that view). Its cursor is
// its own ("a1.", see ids.go); a cursor of either view is invalid_body in
// the other, with a message that names the view it came from.
//
// Reading: "its cursor is its own" is taken as a tag on the same positions,
// not a second sequence: both views page the log's turn positions in the
// same order, and the tag only stops a client from skipping, in the full
// view, the asks to anyone that the addressed view passed over (and from
// taking a full view's cursor, or get_events', for an addressed one). An
// addressed read that waits is woken by a turn awaiting the caller's
// identity or an escalation (for humans and lock holders), never by one
// awaiting anyone.
func (f *Forum) Inbox(ctx context.Context, who Caller, q InboxQuery) (Inbox, error) {
	type result struct {
		box Inbox
		err error
	}
	done := make(chan result, 1)
	f.InboxThen(ctx, who, q, func(box Inbox, err error) { done <- result{box, err} })
	r := <-done
	return r.box, r.err
}

// InboxThen is Inbox for a binding that need not hold a goroutine while
// the call waits (web/inbox_parked.go): answer is called once with what
// Inbox would return — before InboxThen returns when the call did not
// wait, else later, from another goroutine (waitThen). answer must not
// block: a woken call is answered from the goroutine of the read that
// served it with thousands of others (waitCall.afterLater).
func (f *Forum) InboxThen(ctx context.Context, who Caller, q InboxQuery, answer func(Inbox, error)) {
	call, err := f.inboxCall(ctx, who, q)
	if err != nil {
		answer(Inbox{}, err)
		return
	}
	f.waitThen(ctx, who, call.wait, f.hub.turnNews(who, call.addressed), call.read, call.later, func(err error) {
		if err != nil {
			answer(Inbox{}, err)
			return
		}
		answer(call.box, nil)
	})
}

// inboxCall is an inbox call checked and readied: each read fills box.
type inboxCall struct {
	box       Inbox
	addressed bool
	wait      time.Duration
	read      func(context.Context) (bool, error)
	later     laterRead
}

// inboxCall checks an inbox call and readies its reads.
func (f *Forum) inboxCall(ctx context.Context, who Caller, q InboxQuery) (*inboxCall, error) {
	if err := need(who, RightRead); err != nil {
		return nil, err
	}
	limit, err := f.pageSize(q.Limit)
	if err != nil {
		return nil, err
	}
	var addressed bool
	switch q.Addressed {
	case "", "false":
	case "true":
		addressed = !mutant("addressed")
	default:
		return nil, Refuse(InvalidBody, "addressed must be true or false").On("addressed")
	}
	since, err := decodeInboxCursor(q.Since, addressed)
	if err != nil {
		return nil, err
	}
	if _, err := f.inboxScope(ctx, who, q.Extension); err != nil { // checks the extension
		return nil, err
	}
	if err := f.escalateDue(ctx, who); err != nil {
		return nil, err
	}
	wait, err := f.parseWait(q.Wait)
	if err != nil {
		return nil, err
	}
	call := &inboxCall{box: Inbox{Items: []InboxItem{}, Cursor: encodeInboxCursor(since, addressed)}, addressed: addressed, wait: wait}
	out := &call.box
	// A waiting call that its first read found nothing for is served,
	// once woken, by its process's shared read (inbox_fanout.go), from
	// the position below which its last read saw nothing for it (from);
	// the inboxes of humans and lock holders read themselves.
	var from int64
	shared := wait > 0 && !who.Human() && !who.LockHolder()
	waiter := func() fanWaiter {
		return fanWaiter{who: who, ext: q.Extension, since: since, from: from, limit: limit, addressed: addressed}
	}
	// served takes a round's covered answer as the read's.
	served := func(w *fanWaiter, a fanAnswer) bool {
		*out, from = w.page(a), max(from, a.upTo)
		return len(out.Items) > 0
	}
	own := func(ctx context.Context) (bool, error) {
		ctx, cancel := context.WithTimeout(ctx, f.queryTimeout)
		defer cancel()
		var err error
		var horizon int64
		var seen *int64
		if shared {
			seen = &horizon
		}
		*out, err = f.inboxPageSeen(ctx, who, q.Extension, since, limit, addressed, seen)
		from = max(horizon, since+1)
		return len(out.Items) > 0, err
	}
	call.read = func(ctx context.Context) (bool, error) {
		// The shared read is bounded by its round's own deadline (fanRound):
		// the thousands of calls one ask wakes take no timer each.
		if shared && from > 0 {
			w := waiter()
			a, ok, err := f.sharedInbox(ctx, &w)
			if err != nil {
				return false, err
			}
			if ok {
				return served(&w, a), nil
			}
		}
		return own(ctx)
	}
	call.later = func(ctx context.Context, slot *atomic.Int64, then func(bool, error)) bool {
		if !shared || from == 0 {
			return false
		}
		w := waiter()
		w.slot = slot
		w.then = func(a fanAnswer) {
			switch {
			case a.err != nil:
				then(false, a.err)
			case a.covered:
				then(served(&w, a), nil)
			default: // not covered: it reads its own, in a goroutine of its own
				go func() { then(own(ctx)) }()
			}
		}
		f.joinRound(&w)
		return true
	}
	return call, nil
}

// inboxPage reads one page of the inbox after the since position, of the
// addressed view when addressed is set.
func (f *Forum) inboxPage(ctx context.Context, who Caller, extension string, since int64, limit int, addressed bool) (Inbox, error) {
	return f.inboxPageSeen(ctx, who, extension, since, limit, addressed, nil)
}

// inboxPageSeen is inboxPage that, when seen is not nil, sets it to the
// horizon of its read: every turn below it that the caller may be shown is
// in the page, or follows its last item (on SQLite, where nothing is held
// back, the horizon is read before the page for this alone).
func (f *Forum) inboxPageSeen(ctx context.Context, who Caller, extension string, since int64, limit int, addressed bool, seen *int64) (Inbox, error) {
	var (
		threads []models.Thread
		msgs    map[int64]models.Message
	)
	// A read that fails leaves the last read's page (settleWith).
	keep, err := f.settleWith(ctx, func(horizon *int64) ([]int64, error) {
		var h int64
		if seen != nil && horizon == nil {
			var err error
			if h, err = f.horizon(ctx); err != nil {
				return nil, err
			}
		}
		rows, err := f.inboxTurns(ctx, who, extension, since, limit, addressed, horizon)
		if err != nil {
			return nil, fmt.Errorf("inbox: %w", err)
		}
		page, found := make([]models.Thread, len(rows)), make(map[int64]models.Message, len(rows))
		for i, r := range rows {
			page[i], found[r.message.ID] = r.thread, r.message
		}
		if who.Human() || who.LockHolder() {
			var escalated []models.Thread
			err := f.turns(ctx, who, extension, since).Where("threads.escalated_at IS NOT NULL").
				Order("threads.turn_seq").Limit(limit).Find(&escalated).Error
			if err != nil {
				return nil, fmt.Errorf("inbox: escalated: %w", err)
			}
			page = mergeTurns(page, escalated, limit)
		}
		threads, msgs = page, found
		if seen != nil {
			if horizon != nil {
				h = *horizon
			}
			*seen = h
		}
		pos := make([]int64, len(threads))
		for i, th := range threads {
			pos[i] = th.TurnSeq
		}
		return pos, nil
	})
	if err != nil {
		return Inbox{}, err
	}
	threads = threads[:keep]
	out := Inbox{Items: []InboxItem{}, Cursor: encodeInboxCursor(since, addressed)}
	if len(threads) == 0 {
		return out, nil
	}
	if err := f.addTurnMessages(ctx, threads, msgs); err != nil {
		return Inbox{}, err
	}
	now := f.timestamp()
	for _, th := range threads {
		out.Items = append(out.Items, InboxItem{Thread: f.threadShape(th, now), Message: messageShape(msgs[th.TurnMessageID]), position: th.TurnSeq})
	}
	out.Cursor = encodeInboxCursor(threads[len(threads)-1].TurnSeq, addressed)
	return out, nil
}

// turns selects the open turns after since that the caller did not open
// itself, in threads whose state of record is not terminal.
func (f *Forum) turns(ctx context.Context, who Caller, ext string, since int64) *gorm.DB {
	return f.db.WithContext(ctx).Model(&models.Thread{}).
		Joins("JOIN messages turn ON turn.id = threads.turn_message_id").
		Where("threads.turn_seq > ?", since).
		Where("threads.record_state NOT IN "+terminalList).
		Where("NOT (turn.author_identity = ? AND turn.author_extension = ?)", who.Identity, ext)
}

// inboxScope selects the threads in the caller's inbox, as seen from one
// extension ("" for none): those awaiting it. (Humans and lock holders see
// escalated threads besides; see inboxPage.)
func (f *Forum) inboxScope(ctx context.Context, who Caller, ext string) (*gorm.DB, error) {
	if ext != "" && !validName(ext, f.limits.ExtensionMaxChars) {
		return nil, Refuse(InvalidBody, "extension must match [a-z0-9][a-z0-9._-]{0,%d}", f.limits.ExtensionMaxChars-1).On("extension")
	}
	db := f.turns(ctx, who, ext, -1).Where("threads.awaiting_identity IN ?", []string{who.Identity, Anyone})
	if ext != "" {
		db = db.Where("NOT (threads.awaiting_identity = ? AND threads.awaiting_extension NOT IN ?)", who.Identity, []string{"", ext})
	}
	return db, nil
}

// inboxCount counts the threads in the caller's inbox.
func (f *Forum) inboxCount(ctx context.Context, who Caller, ext string) (int, error) {
	db, err := f.inboxScope(ctx, who, ext)
	if err != nil {
		return 0, err
	}
	var n int64
	if err := db.Count(&n).Error; err != nil {
		return 0, fmt.Errorf("inbox count: %w", err)
	}
	return int(n), nil
}

// mergeTurns merges two lists ordered by turn_seq into the first limit
// distinct threads. Each list holds the first limit of its kind, so the
// merge holds the first limit of both together.
func mergeTurns(a, b []models.Thread, limit int) []models.Thread {
	out := make([]models.Thread, 0, min(limit, len(a)+len(b)))
	for len(out) < limit && (len(a) > 0 || len(b) > 0) {
		var next models.Thread
		if len(b) == 0 || len(a) > 0 && a[0].TurnSeq <= b[0].TurnSeq {
			next, a = a[0], a[1:]
		} else {
			next, b = b[0], b[1:]
		}
		if len(out) > 0 && out[len(out)-1].ID == next.ID {
			continue // in both lists: a turn_seq belongs to one thread
		}
		out = append(out, next)
	}
	return out
}

// addTurnMessages reads into msgs the turn messages of threads it lacks
// (in the inbox, those of escalated turns, which a human's or a lock
// holder's inbox reads apart).
func (f *Forum) addTurnMessages(ctx context.Context, threads []models.Thread, msgs map[int64]models.Message) error {
	var ids []int64
	for _, th := range threads {
		if _, ok := msgs[th.TurnMessageID]; !ok {
			ids = append(ids, th.TurnMessageID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	// Not "SELECT *": PostgreSQL's search vector is not shown (messageColumns).
	rows, err := messageRows(f.db.WithContext(ctx).Raw("SELECT "+strings.Join(messageColumns, ", ")+" FROM messages WHERE id IN ?", ids), len(ids))
	if err != nil {
		return fmt.Errorf("inbox messages: %w", err)
	}
	for _, m := range rows {
		msgs[m.ID] = m
	}
	return nil
}
