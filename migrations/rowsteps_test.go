package migrations

import (
	"regexp"
	"testing"
)

// TestRowStepsAreListed: every migration that rewrites stored rows (a
// statement that starts a line with UPDATE or DELETE) is in RowSteps, and
// nothing else is, on both dialects: import relies on the list to refuse
// a bundle written before such a step.
func TestRowStepsAreListed(t *testing.T) {
	rewrite := regexp.MustCompile(`(?mi)^(UPDATE|DELETE)\b`)
	for _, dialect := range []string{"postgres", "sqlite"} {
		list, err := List(dialect)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range list {
			_, listed := RowSteps[m.Version]
			if found := rewrite.MatchString(m.SQL); found != listed {
				t.Errorf("%s %04d_%s: rewrites stored rows %v, listed in RowSteps %v", dialect, m.Version, m.Name, found, listed)
			}
		}
	}
}
