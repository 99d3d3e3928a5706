package services

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"parley/models"
)

// ActPreview says, before it is sent, what one act would do if the caller
// posted it now under a given message: the state it would set (and how),
// and whom it would await. The web UI's reply form offers exactly the acts
// previewed and words each preview; the rules are Post's own (admits,
// authorize, self_reply, plan, replyAwaiting), so form and Post agree.
type ActPreview struct {
	Kind     Kind
	Outcome  Outcome   // what its mark does; OutcomeNone for an act without one
	To       State     // the state it sets, confirms or returns to ("" for none)
	Awaiting *Awaiting // whom the thread awaits after it; nil: nobody
	Carries  bool      // it carries the open turn forward (note) instead of opening one
	States   []State   // mark only: the states it may name here
}

// Outcome is what an act's mark does to the thread, as ActPreview says.
type Outcome string

// The outcomes of an act's mark.
const (
	OutcomeNone     Outcome = ""          // no mark, or the state it is in
	OutcomeSets     Outcome = "sets"      // the new state of record
	OutcomeProposes Outcome = "proposes"  // a proposal pending on the state of record
	OutcomeConfirms Outcome = "confirms"  // confirms the pending proposal
	OutcomeWithdraw Outcome = "withdraws" // withdraws the pending proposal, back to the record
)

// PreviewActs previews each of kinds posted by who in thread under parent
// ("" for the root), in the order given, leaving out the acts Post would
// refuse there whatever the body: not admitted by the state of record,
// lacking authority, a reply to one's own message, or a mark's transition
// the table does not allow (a mark is kept when some state is allowed;
// its States name them). Profile acts that name a claim are not previewed:
// a claim's own form posts them.
func (f *Forum) PreviewActs(ctx context.Context, who Caller, thread, parent string, kinds []Kind) ([]ActPreview, error) {
	if err := need(who, RightWrite); err != nil {
		return nil, err
	}
	id, err := threadRef(thread)
	if err != nil {
		return nil, err
	}
	var parentID int64
	if parent != "" {
		p, ok := ParseMessageRef(parent)
		if !ok {
			return nil, Refuse(InvalidBody, "parent must be a message key, \"msg_N\"").On("parent")
		}
		parentID = p
	}
	var out []ActPreview
	err = f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		th, err := readThreadRow(tx, id)
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return threadNotFound(id)
		}
		if err != nil {
			return fmt.Errorf("read thread: %w", err)
		}
		par, _, err := findParent(tx, th, parentID, who.Identity, 0, partyProbe{})
		if err != nil {
			return err
		}
		self := turn{who.Identity, ""}
		for _, k := range kinds {
			if claimAct(k) {
				continue
			}
			env := Envelope{Kind: k}
			if authorize(th, who, k) != nil || checkSelfReply(par, who, env, nil) != nil {
				continue
			}
			p := ActPreview{Kind: k, Carries: carriesTurn(k)}
			if k == Mark {
				for _, s := range markStates {
					env.State = s
					if admits(th, who, env) != nil {
						continue
					}
					// A mark of the state the thread is in changes nothing.
					if chg, err := plan(th, who, Mark, s); err == nil && chg.effect != unchanged {
						p.States = append(p.States, s)
					}
				}
				if len(p.States) == 0 {
					continue
				}
				out = append(out, p)
				continue
			}
			if admits(th, who, env) != nil {
				continue
			}
			var question *models.Message
			if k == Answer {
				if question, err = questionAbove(tx, par, who.Identity); err != nil {
					return err
				}
			}
			chg, err := plan(th, who, k, markOf(th, env, question))
			if err != nil {
				continue
			}
			p.Outcome, p.To = outcomeOf(chg), chg.to
			t := replyAwaiting(th, par, env, question, nil).notSelf(self)
			p.Awaiting = awaitingOf(t.identity, t.extension)
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// markStates are the states a mark may name, in the manifest's order.
var markStates = []State{Open, Answered, Decided, Closed, Deferred, Obsolete, Rejected}

func outcomeOf(c change) Outcome {
	switch c.effect {
	case settle:
		return OutcomeSets
	case proposal:
		return OutcomeProposes
	case confirmPending:
		return OutcomeConfirms
	case withdraw:
		return OutcomeWithdraw
	}
	return OutcomeNone
}
