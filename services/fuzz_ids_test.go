package services

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// The fuzz targets of the identifiers and cursors a client sends back, and
// of the strict JSON check in front of every body. Each must never panic;
// a refusal is invalid_body naming its field; whatever is accepted
// round-trips. Their corpora are in testdata/fuzz; CI runs each briefly:
//
//	go test -run '^$' -fuzz '^FuzzCursor$' -fuzztime 30s ./services

func FuzzThreadRef(f *testing.F) {
	for _, s := range []string{"th_1", "1", "th_01", "0", "-1", "th_", "th_9223372036854775807", "th_9223372036854775808", "msg_1", " 1", "1e3", "+1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, ok := ParseThreadRef(s)
		if !ok {
			if _, err := threadRef(s); !isInvalidBody(err, "thread") {
				t.Fatalf("%q: refusal %v", s, err)
			}
			return
		}
		if id <= 0 {
			t.Fatalf("%q parsed to %d", s, id)
		}
		if back, ok := ParseThreadRef(ThreadKey(id)); !ok || back != id {
			t.Fatalf("%q → %d → %s → %d", s, id, ThreadKey(id), back)
		}
		if raw, _ := json.Marshal(s); true {
			if fromJSON, ok := refFromJSON(raw, threadPrefix); !ok || fromJSON != id {
				t.Fatalf("%q as JSON parsed to %d, as text to %d", s, fromJSON, id)
			}
		}
	})
}

func FuzzCursor(f *testing.F) {
	for _, s := range []string{"", "c1.MA", "c1.NDI", encodeCursor(1 << 40), "c1.", "c2.MA", "c1.LTE", "c1.KzU", "c1.!!", "MA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pos, err := decodeCursor(s, "since")
		if err != nil {
			if !isInvalidBody(err, "since") {
				t.Fatalf("%q: refusal %v", s, err)
			}
			return
		}
		if pos < 0 {
			t.Fatalf("%q decoded to %d", s, pos)
		}
		if back, err := decodeCursor(encodeCursor(pos), "since"); err != nil || back != pos {
			t.Fatalf("%q → %d → %s → %d (%v)", s, pos, encodeCursor(pos), back, err)
		}
	})
}

func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{"kind":"note"}`, `{"kind":"note","kind":"ask"}`, "{\"body\":\"\xff\"}", `{"body":"\udc00"}`,
		`{"body":"\ud83e\udd9c"}`, `{"a":{"b":[{"c":1,"c":2}]}}`, `{"a~b/c":1,"a~b/c":2}`, `{`, `[]`, `""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		err := CheckJSON(raw)
		if err != nil {
			var r *Refusal
			if !errors.As(err, &r) || r.Reason != InvalidBody || r.Message == "" {
				t.Fatalf("%q: %v", raw, err)
			}
			return
		}
		if !json.Valid(raw) {
			return // malformed JSON is refused later, by the decoder
		}
		if !utf8.Valid(raw) {
			t.Fatalf("%q passed with invalid UTF-8", raw)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err == nil && strings.ContainsRune(string(mustMarshal(v)), utf8.RuneError) && !strings.Contains(string(raw), "\\ufffd") && !strings.ContainsRune(string(raw), utf8.RuneError) {
			t.Fatalf("%q passed but decodes with a replacement character", raw)
		}
	})
}

func mustMarshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func isInvalidBody(err error, field string) bool {
	var r *Refusal
	return errors.As(err, &r) && r.Reason == InvalidBody && r.Field == field && r.Message != ""
}
