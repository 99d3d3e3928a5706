package services

import (
	"time"

	"parley/models"
)

// Admitted lists, of kinds, the acts the thread's state of record admits
// from who: the same test Post applies (admits), so a form that offers
// only these never offers what the thread will refuse. A mark is admitted
// when it is admitted with some state (on a closed thread with a reopen
// pending, only a mark of closed, which turns the reopen down).
//
// Reading: only the state of record is read here, as §5.2 rule 1 says
// what is admitted reads; whether a mark's transition is allowed depends
// on the state it names and is told when it is sent.
func Admitted(th Thread, who Caller, kinds []Kind) []Kind {
	row := models.Thread{RecordState: string(th.StateOfRecord), RecordConfirmedBy: th.RecordConfirmedBy}
	if th.Confirmed { // pending() reads a nil confirmation as a proposal
		row.StateConfirmedAt = &time.Time{}
	}
	var out []Kind
	for _, k := range kinds {
		env := Envelope{Kind: k}
		if k == Mark {
			env.State = Closed // the one state a closed record may admit
		}
		if admits(row, who, env) == nil {
			out = append(out, k)
		}
	}
	return out
}
