package main

// checks lists every check, section by section, in the order they run.
func checks() []check {
	var all []check
	for _, part := range [][]check{
		manifestChecks(), bindingChecks(), envelopeChecks(), idempotencyChecks(), actChecks(), stateChecks(), recordChecks(), authorityChecks(),
		identityChecks(), selfReplyChecks(), readingChecks(), moreReadingChecks(), limitChecks(), refusalChecks(),
		dialecticChecks(), moreDialecticChecks(), feedChecks(), streamChecks(), guardChecks(), moreGuardChecks(), witnessChecks(),
	} {
		all = append(all, part...)
	}
	return all
}
