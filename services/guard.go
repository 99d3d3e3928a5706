package services

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"gorm.io/gorm"

	"parley/models"
)

// The guard profile's first three rules (docs/protocol.md §14): duplicate bodies,
// runaway chains and runaway threads. Each check reads counters that were
// written when the messages above were stored, so a post costs O(1) for
// rules 2 and 3 and one indexed read of guard_recent_bodies hashes for
// rule 1, however long the thread is.
//
//   - messages.chain_len: the unmarked model messages ending at a message,
//     itself included; 0 for a human's or a lock holder's message or one
//     that carries a mark. Rule 2 refuses a model's reply whose parent's
//     chain_len has reached guard_chain_max.
//   - threads.model_run: model messages in a row, in creation order, since
//     a human or a lock holder last acted in the thread. Rule 3 refuses a
//     model's message once it has reached guard_thread_run_max.
//   - messages.body_hash: the SHA-256 of the body as rule 1 compares it.
//
// A guard limit of 0 or less turns its rule off.

// countedModel reports whether rules 2 and 3 count the caller as a model:
// humans never, and "lock holders are not counted as models for rules 2–3"
// (§14 rule 5). Rule 1 applies to every model, lock holders included.
func countedModel(who Caller) bool { return !who.Human() && !who.LockHolder() }

// NormalizeBody is a body as rule 1 compares it: case-folded (Unicode
// full case folding, so "STRASSE" and "straße" are one body), every run of
// whitespace one space, none at either end.
func NormalizeBody(body string) string {
	return strings.Join(strings.Fields(cases.Fold().String(body)), " ")
}

func bodyHash(body string) string {
	var sum [sha256.Size]byte
	if folded, ascii := normalizeASCII(body); ascii {
		sum = sha256.Sum256(folded)
	} else {
		sum = sha256.Sum256([]byte(NormalizeBody(body)))
	}
	return hex.EncodeToString(sum[:])
}

// normalizeASCII is NormalizeBody for a body of ASCII alone, in one pass
// and one allocation: full case folding of ASCII is lowering A to Z, and
// its whitespace is what unicode.IsSpace finds in ASCII. Nearly every
// body is ASCII; NormalizeBody's Unicode path was 2 % of a post's CPU.
// ascii is false, and nothing is answered, for any other body.
func normalizeASCII(body string) (folded []byte, ascii bool) {
	out := make([]byte, 0, len(body))
	space := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c >= utf8.RuneSelf:
			return nil, false
		case c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
			space = len(out) > 0
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, c)
	}
	return out, true
}

// checkGuard applies rules 1–3 to a reply before it is stored; hash is the
// reply's bodyHash. Humans are never refused by the guard (rule 5).
//
// Reading: rule 2 refuses every act of a counted model below a runaway
// chain, decide and mark included, as the rule says "a model's reply". A
// way out stays open: parent defaults to the root, whose chain is at most
// one message long, and a human or a lock holder resets the chain.
//
// reads holds the identity's last guard_recent_bodies body hashes in the
// thread and the party's earlier message of the same body (rule 1 across
// threads), both read with the parent (readParentRow); the thread's own
// rule goes first, as its refusal names the thread.
func (f *Forum) checkGuard(tx *gorm.DB, th models.Thread, parent models.Message, who Caller, hash string, reads guardReads) error {
	if who.Human() {
		return nil
	}
	l := f.limits
	if countedModel(who) {
		if l.GuardThreadRunMax > 0 && th.ModelRun >= l.GuardThreadRunMax {
			return Refuse(LoopSuspected, "thread %s is paused by the guard: its last %d messages are all by models, with no human, no lock holder and no confirmed state change among them; it takes model messages again once a human or a lock holder acts in it",
				ThreadKey(th.ID), th.ModelRun).On("thread")
		}
		if l.GuardChainMax > 0 && parent.ChainLen >= l.GuardChainMax {
			return Refuse(LoopSuspected, "the %d messages above %s's reply are all by models and none carries a mark (guard_chain_max %d): reply higher up in the thread, or leave it to a human or a lock holder",
				parent.ChainLen, MessageKey(parent.ID), l.GuardChainMax).On("parent")
		}
	}
	if err := f.checkDuplicate(th.ID, who.Identity, hash, reads.recent); err != nil {
		return err
	}
	return f.partyDuplicate(tx, reads.probe, reads.earlier)
}

// checkDuplicate applies rule 1: the body must differ from the identity's
// last guard_recent_bodies bodies in the thread, whose hashes are recent
// (read newest first through messages_guard_bodies, at most that many).
//
// Reading: "the same identity's" bodies are those of every extension of
// the identity, since the token, not the extension, is the agent (§7);
// and every act counts, marks included.
func (f *Forum) checkDuplicate(thread int64, identity, hash string, recent []string) error {
	n := f.limits.GuardRecentBodies
	if n <= 0 {
		return nil
	}
	if slices.Contains(recent, hash) {
		return Refuse(DuplicateBody, "you (%s) said this already in thread %s: the body equals one of your last %d there, ignoring case and whitespace; say something new, or nothing",
			identity, ThreadKey(thread), n).On("body")
	}
	return nil
}

// carriesMark reports whether an act carries a mark for rule 2: a mark
// always does; any other act when its state change was planned (an answer
// that marks answered, a decide, a reopen), proposal or not.
func carriesMark(kind Kind, chg change) bool { return kind == Mark || chg.effect != unchanged }

// chainAfter is the chain_len of a new message below parent (nil for a
// thread's root).
func chainAfter(parent *models.Message, who Caller, marked bool) int {
	switch {
	case !countedModel(who) || marked:
		return 0
	case parent == nil:
		return 1
	}
	return parent.ChainLen + 1
}

// runAfter is the thread's model_run once a message is stored. A human's
// or a lock holder's message resets it, and so would a confirmed state
// change, which only they make.
//
// Reading: a model's withdraw of its own proposal is no confirmed state
// change: it confirms nothing new, and counting it would let two models
// reset the run by proposing and withdrawing in turn.
func runAfter(th models.Thread, who Caller, chg change) int {
	if !countedModel(who) || chg.effect == settle || chg.effect == confirmPending {
		return 0
	}
	return th.ModelRun + 1
}

// paused reports whether rule 3 holds the thread.
func (f *Forum) paused(th models.Thread) bool {
	return f.limits.GuardThreadRunMax > 0 && th.ModelRun >= f.limits.GuardThreadRunMax
}
