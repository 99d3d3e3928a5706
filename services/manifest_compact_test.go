package services_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"parley/migrations/dbtest"
	"parley/services"
)

// compactManifestMaxChars is the compact manifest's budget (issue 26): a
// small model reads it whole.
const compactManifestMaxChars = 8000

// TestCompactManifest holds the compact form to the full one: every act,
// state, claim status, reason, right, limit and profile of the
// manifest by name, each with one line of at most CompactLineMax
// characters, every operation's name, the same limits and the full form's digest, all within
// compactManifestMaxChars.
func TestCompactManifest(t *testing.T) {
	forum := services.New(dbtest.Fresh(t, "sqlite"), services.Config{})
	ctx := context.Background()
	full, compact := forum.Manifest(ctx), forum.CompactManifest(ctx)
	raw, err := json.Marshal(compact)
	if err != nil {
		t.Fatal(err)
	}
	fullRaw, _ := json.Marshal(full)
	t.Logf("compact manifest %d characters, full %d (%.2f)", len(raw), len(fullRaw), float64(len(raw))/float64(len(fullRaw)))
	if len(raw) > compactManifestMaxChars {
		t.Errorf("the compact manifest is %d characters, over its budget of %d", len(raw), compactManifestMaxChars)
	}
	if compact.Digest != forum.ManifestDigest() || compact.Limits != full.Limits {
		t.Errorf("digest %s or limits differ from the full manifest's", compact.Digest)
	}
	lines := map[string]map[string]string{}
	var got map[string]json.RawMessage
	json.Unmarshal(raw, &got)
	for _, key := range []string{"limit_meanings", "acts", "states", "claim_statuses", "reasons", "rights", "profiles"} {
		var m map[string]string
		if err := json.Unmarshal(got[key], &m); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		lines[key] = m
		for name, line := range m {
			if line == "" || len(line) > services.CompactLineMax || strings.Contains(line, "\n") {
				t.Errorf("%s.%s: %q is not one line of at most %d characters", key, name, line, services.CompactLineMax)
			}
		}
	}
	want := map[string][]string{}
	limits := reflect.TypeOf(full.Limits)
	for i := range limits.NumField() {
		want["limit_meanings"] = append(want["limit_meanings"], strings.Split(limits.Field(i).Tag.Get("json"), ",")[0])
	}
	acts := full.Acts
	for _, p := range full.Profiles {
		want["profiles"] = append(want["profiles"], p.Name)
		acts = append(acts, p.Acts...)
		for _, s := range p.Statuses {
			want["claim_statuses"] = append(want["claim_statuses"], string(s.Status))
		}
	}
	for _, a := range acts {
		want["acts"] = append(want["acts"], string(a.Kind))
	}
	for s := range full.States.Descriptions {
		want["states"] = append(want["states"], string(s))
	}
	for _, r := range full.Reasons {
		want["reasons"] = append(want["reasons"], string(r.Reason))
	}
	for _, r := range full.Rights {
		want["rights"] = append(want["rights"], string(r.Right))
	}
	if len(compact.Operations) != len(full.Operations) {
		t.Errorf("%d operations, the manifest has %d", len(compact.Operations), len(full.Operations))
	}
	for key, names := range want {
		if len(lines[key]) != len(names) {
			t.Errorf("%s: %d lines for %d names", key, len(lines[key]), len(names))
		}
		for _, name := range names {
			if lines[key][name] == "" {
				t.Errorf("%s: no line for %s", key, name)
			}
		}
	}
	for _, q := range []struct {
		compact string
		full    bool
	}{{"", true}, {"false", true}, {"true", false}} {
		v, err := forum.ManifestFor(ctx, services.ManifestQuery{Compact: q.compact})
		if _, isFull := v.(services.Manifest); err != nil || isFull != q.full {
			t.Errorf("compact %q: %T, %v", q.compact, v, err)
		}
	}
	_, err = forum.ManifestFor(ctx, services.ManifestQuery{Compact: "yes"})
	expectRefusal(t, err, services.InvalidBody, "compact")
}
