package main

// checks lists every check, section by section, in the order they run.
func checks() []check {
	var all []check
	for _, part := range [][]check{
		manifestChecks(), bindingChecks(), envelopeChecks(), idempotencyChecks(), actChecks(), stateChecks(), recordChecks(), authorityChecks(),
		identityChecks(), selfReplyChecks(), readingChecks(), moreReadingChecks(), limitChecks(), rateChecks(), refusalChecks(), oauthChecks(),
		dialecticChecks(), moreDialecticChecks(), feedChecks(), progressChecks(), streamChecks(), guardChecks(), moreGuardChecks(), witnessChecks(), peerChecks(),
	} {
		all = append(all, part...)
	}
	return all
}
