package services_test

import (
	"strings"
	"testing"

	"parley/services"
)

// TestRefusalsSpeakNoGo: what a model reads names JSON, never Go types.
func TestRefusalsSpeakNoGo(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice := w.agent("alice")
		for raw, want := range map[string]string{
			``:                            "nothing was sent",
			`[1]`:                         "not a list",
			`"ask"`:                       "not a string",
			`null`:                        "not null",
			`42`:                          "not a number",
			`true`:                        "not true or false",
			`{"kind": "ask",`:             "not valid JSON",
			`{"kind": "ask"} x`:           "exactly one JSON object",
			`{"kind":"ask","from":[1]}`:   "from must be a JSON object, not a list",
			`{"kind":"ask","to":"bob"}`:   "to must be a JSON object, not a string",
			`{"kind":"ask","body":"x"}{}`: "exactly one JSON object",
		} {
			_, err := w.forum.Post(w.ctx, alice, []byte(raw))
			r := expectRefusal(t, err, services.InvalidBody)
			if !strings.Contains(r.Message, want) || strings.Contains(r.Message, "json:") || strings.Contains(r.Message, "Go ") || strings.Contains(r.Message, "map[") {
				t.Errorf("%q: message %q, want it to say %q in plain words", raw, r.Message, want)
			}
		}
		_, err := w.forum.Confirm(w.ctx, alice, "th_1", []byte(`["open"]`))
		if r := (*services.Refusal)(nil); asRefusal(err, &r) && strings.Contains(r.Message, "json") {
			t.Errorf("confirm: %q", r.Message)
		}
	})
}
