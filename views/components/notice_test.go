package components

import (
	"testing"

	"parley/services"
)

// Every reason of the protocol has its own plain sentence.
func TestPlainCoversEveryReason(t *testing.T) {
	seen := map[string]services.Reason{}
	for _, r := range services.Reasons {
		s, ok := plain[r.Reason]
		if !ok || s == "" {
			t.Errorf("reason %s has no plain sentence", r.Reason)
			continue
		}
		if other, dup := seen[s]; dup {
			t.Errorf("reasons %s and %s say the same: %q", other, r.Reason, s)
		}
		seen[s] = r.Reason
	}
	if Plain("no_such_reason") == "" {
		t.Error("an unknown reason must still get a sentence")
	}
}
