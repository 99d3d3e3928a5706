package migrations_test

import "parley/services"

// beforeOwners are the limits a forum at a schema older than migration 15
// runs with: without owners there are no parties, so the witness profile's
// duplicates across threads per party (docs/protocol.md §14 rule 1) stay
// off, as they were before that migration.
func beforeOwners() services.Limits {
	l := services.DefaultLimits()
	l.GuardRecentBodiesParty = 0
	return l
}
