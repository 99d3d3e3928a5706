package services_test

import (
	"strings"
	"testing"

	"parley/services"
)

// TestPartyProbePlanWalksThePartysIndex reads the plan of the rule across
// threads (§14 rule 1) in a seeded forum whose 10,000 messages two
// identities wrote: for an identity that has posted nothing, and for an
// owner, both databases probe the party's bodies by hash
// (messages_party_bodies, migration 0021), walk that party's index
// backwards and never the table's primary key past everyone else's
// messages. PostgreSQL's is the
// generic plan a post runs it under, which cannot tell a rare identity
// from a prolific one (migration 0019, services/witness_duplicates.go).
func TestPartyProbePlanWalksThePartysIndex(t *testing.T) {
	for _, c := range []struct {
		dialect   string
		want, not []string
	}{
		{"postgres", []string{"Backward using messages_party_bodies on messages", "Index Scan Backward using messages_author on messages", "Index Scan Backward using messages_owner on messages"},
			[]string{"messages_pkey", "Bitmap", "Seq Scan"}},
		{"sqlite", []string{"INDEX messages_party_bodies", "USING INDEX messages_author (author_identity>? AND author_identity<?)", "USING INDEX messages_owner (author_owner>? AND author_owner<?)"},
			[]string{"SCAN messages", "PRIMARY KEY"}},
	} {
		t.Run(c.dialect, func(t *testing.T) {
			forum, _, ctx := seededPlanForum(t, c.dialect)
			for _, who := range []services.Caller{{Identity: "ainotes:rare"}, {Identity: "ainotes:rare", Owner: "human:alice"}} {
				plan, err := forum.ExplainPartyProbe(ctx, who, false)
				if err != nil {
					t.Fatal(err)
				}
				for _, want := range c.want {
					if !strings.Contains(plan, want) {
						t.Errorf("%s: the party probe's plan lacks %q:\n%s", who.Party(), want, plan)
					}
				}
				for _, not := range c.not {
					if strings.Contains(plan, not) {
						t.Errorf("%s: the party probe's plan has %q:\n%s", who.Party(), not, plan)
					}
				}
			}
		})
	}
}
