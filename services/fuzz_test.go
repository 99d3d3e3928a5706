package services_test

import (
	"errors"
	"testing"
	"unicode/utf8"

	"parley/services"
)

// FuzzParseEnvelope feeds the parser arbitrary bytes: it must never panic,
// every refusal must be invalid_body with a message, and whatever it
// accepts must respect the envelope's rules.
//
//	go test -run '^$' -fuzz FuzzParseEnvelope ./services
func FuzzParseEnvelope(f *testing.F) {
	for _, seed := range []string{
		`{"kind":"ask","body":"q?"}`,
		`{"kind":"answer","thread":"th_1","parent":2,"body":"a","from":{"extension":"w-1"}}`,
		`{"kind":"mark","thread":1,"state":"closed","body":"x","provenance":{"model":"m"}}`,
		`{"kind":"ask","to":{"identity":"ainotes:bob","extension":"b"},"body":"x"}`,
		`{"kind":"note","thread":"1","body":"\u0000"}`,
		`{"kind":"note","thread":"th_9","body":"` + string(make([]byte, 600)) + `"}`,
		`[]`, `null`, `{`, `{"kind":1}`,
	} {
		f.Add([]byte(seed))
	}
	forum := services.New(nil, services.Config{})
	limits := services.DefaultLimits()
	f.Fuzz(func(t *testing.T, raw []byte) {
		env, err := forum.ParseEnvelope(raw)
		if err != nil {
			var r *services.Refusal
			if !errors.As(err, &r) || r.Reason != services.InvalidBody || r.Message == "" {
				t.Fatalf("parser failed with %v", err)
			}
			return
		}
		n := utf8.RuneCountInString(env.Body)
		switch {
		case n == 0 || n > limits.BodyMaxChars:
			t.Fatalf("accepted a body of %d characters", n)
		case env.ThreadID == 0 && env.Kind != services.Ask:
			t.Fatalf("accepted %s without a thread", env.Kind)
		case (env.Kind == services.Mark) != (env.State != ""):
			t.Fatalf("accepted %s with state %q", env.Kind, env.State)
		case env.To != nil && env.Kind != services.Ask:
			t.Fatalf("accepted to on %s", env.Kind)
		}
	})
}
