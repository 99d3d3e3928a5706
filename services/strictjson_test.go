package services

import (
	"bytes"
	"encoding/json"
	"maps"
	"testing"
)

// TestReadObjectAgreesWithTwoPasses holds readObject's one pass to what
// it replaced: CheckJSON, then encoding/json into raw members. What it
// reads, the two passes read alike; what it leaves to decodeObject's
// slower path, they refuse (or it is no single object).
func TestReadObjectAgreesWithTwoPasses(t *testing.T) {
	for _, raw := range []string{
		`{}`,
		` { "kind" : "note" , "body":"x" } `,
		"{\"kind\":\"note\"}\n",
		`{"from":{"extension":"lab"},"to":["a:b"],"thread":null,"n":-1.5e3,"t":true}`,
		`{"b\u00e9":"\u00e9\ud83d\ude00","esc":"a\"b\\c\n"}`,
		`{"a":{"a":1},"b":[{"a":1},{"a":2}]}`,
		`{"kind":"note","kind":"ask"}`,
		`{"a":{"x":1,"x":2}}`,
		"{\"a\":\"\xff\"}",
		`{"a":"\ud800"}`,
		`{"a":1,}`,
		`{"a":1}{"b":2}`,
		`{"a":1} x`,
		`{"a":1`,
		`{"a" 1}`,
		`[]`,
		`"s"`,
		`null`,
		`12`,
		``,
		`   `,
	} {
		got, ok := readObject([]byte(raw))
		var want map[string]json.RawMessage
		dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
		twoPasses := CheckJSON([]byte(raw)) == nil && dec.Decode(&want) == nil && want != nil && !dec.More()
		if ok != twoPasses {
			t.Errorf("%q: one pass reads it %v, two passes %v", raw, ok, twoPasses)
			continue
		}
		if ok && !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
			t.Errorf("%q: one pass read %q, two passes %q", raw, got, want)
		}
	}
}

// TestStringIntoAgreesWithUnmarshal: the plain-string shortcut reads what
// json.Unmarshal reads, and everything it does not take (escapes, null,
// other types, bytes that are not UTF-8, broken text) goes to
// json.Unmarshal, error and value alike.
func TestStringIntoAgreesWithUnmarshal(t *testing.T) {
	for _, raw := range []string{
		`"note"`, `""`, `"é 😀 tab-free"`, `"a\"b"`, `"a\\b"`, `"\u00e9"`, `"line\nbreak"`,
		`null`, `1`, `true`, `["x"]`, `{"a":"b"}`, "\"\xff\"", "\"a\x01b\"", `"unterminated`, `"`, `x"`,
	} {
		var got, want string
		errGot, errWant := stringInto([]byte(raw), &got), json.Unmarshal([]byte(raw), &want)
		if got != want || (errGot == nil) != (errWant == nil) {
			t.Errorf("%q: stringInto read %q (%v), json.Unmarshal %q (%v)", raw, got, errGot, want, errWant)
		}
	}
}
