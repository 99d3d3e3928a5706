package main

// checks lists every check, section by section, in the order they run.
func checks() []check {
	var all []check
	for _, part := range [][]check{
		manifestChecks(), envelopeChecks(), actChecks(), stateChecks(), recordChecks(), authorityChecks(),
		identityChecks(), selfReplyChecks(), readingChecks(), limitChecks(), refusalChecks(),
		dialecticChecks(), feedChecks(), guardChecks(), witnessChecks(),
	} {
		all = append(all, part...)
	}
	return all
}
