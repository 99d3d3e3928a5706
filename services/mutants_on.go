//go:build conformmutants

package services

import (
	"os"
	"slices"
	"strings"
)

// mutant reports whether the planted defect name is listed in
// PARLEY_CONFORM_MUTANTS (comma-separated). Only the mutation test of
// cmd/parley-conform builds this file: it breaks a rule on purpose to show
// that the conformance check naming the rule fails. The defects: self_reply
// (§7 loop protection off), behind_record (§5.2 rule 2 off: a model's mark
// may land behind the state of record), addressed (§8 inbox addressed=true
// ignored), posts_rate (§9 posts_per_minute not enforced).
func mutant(name string) bool {
	return slices.Contains(strings.Split(os.Getenv("PARLEY_CONFORM_MUTANTS"), ","), name)
}
