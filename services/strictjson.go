package services

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// CheckJSON refuses what encoding/json would quietly accept and change: a
// member name twice in one object (encoding/json keeps the last, so
// {"kind":"note","kind":"ask"} would open a thread), and text that is not
// UTF-8 — invalid bytes or a lone surrogate escape, which encoding/json
// replaces with U+FFFD. Every request body is checked before it is read;
// the MCP binding checks whole JSON-RPC messages with it too.
func CheckJSON(raw []byte) error {
	_, err := CheckJSONValue(raw)
	return err
}

// CheckJSONValue is CheckJSON in the same pass that says whether raw is
// one valid JSON value (json.Valid's answer, without a second pass).
func CheckJSONValue(raw []byte) (valid bool, err error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	_, err = dec.ReadValue()
	if err == nil {
		_, err = dec.ReadToken() // nothing may follow the value
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		return false, nil
	}
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		return false, nil
	}
	field := PointerField(string(se.JSONPointer))
	switch {
	case errors.Is(err, jsontext.ErrDuplicateName):
		return false, Refuse(InvalidBody, "%s appears twice in one object; name each field once", field).On(field)
	case !json.Valid(raw):
		return false, nil // malformed JSON: the caller's decoder says so
	}
	return false, Refuse(InvalidBody, "%s is not UTF-8 text (invalid bytes or a lone surrogate escape)", field).On(field)
}

// readObject reads raw as exactly one JSON object and answers its members'
// raw values, in one pass that also holds CheckJSON's rules (jsontext
// refuses a name twice and text that is not UTF-8). ok is false for
// anything else — not an object, malformed, a rule broken, something after
// the object — and decodeObject then words the refusal on its slower path.
// Before, every envelope was parsed twice, by CheckJSON and by
// encoding/json: 3 % of a post's server CPU.
func readObject(raw []byte) (obj map[string]json.RawMessage, ok bool) {
	dec := objectReaders.Get().(*jsontext.Decoder)
	defer func() {
		dec.Reset(bytes.NewReader(nil))
		objectReaders.Put(dec)
	}()
	dec.Reset(bytes.NewReader(raw))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, false
	}
	obj = make(map[string]json.RawMessage, 8)
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, false
		}
		name := tok.String() // before the next read voids tok
		value, err := dec.ReadValue()
		if err != nil {
			return nil, false
		}
		obj[name] = bytes.Clone(value) // value is the decoder's until its next read
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return nil, false
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	return obj, true
}

// objectReaders keeps readObject's decoders, whose buffers would otherwise
// be allocated anew for every body.
var objectReaders = sync.Pool{New: func() any { return jsontext.NewDecoder(bytes.NewReader(nil)) }}

// PointerField turns a JSON pointer ("/from/extension") into the dotted
// field name refusals use ("from.extension").
func PointerField(ptr string) string {
	if ptr == "" {
		return ""
	}
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, p := range parts {
		parts[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(p)
	}
	return strings.Join(parts, ".")
}

// stringInto reads raw, one JSON value, into s as json.Unmarshal does. A
// string with no escape, no control character and only UTF-8 is its bytes
// between the quotes, taken without encoding/json's reflection (its
// Unmarshal was a quarter of an envelope's parse); anything else, null
// and every refusal included, goes to json.Unmarshal.
func stringInto(raw []byte, s *string) error {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		inner := raw[1 : n-1]
		plain := utf8.Valid(inner)
		for _, b := range inner {
			if b == '\\' || b == '"' || b < 0x20 {
				plain = false
				break
			}
		}
		if plain {
			*s = string(inner)
			return nil
		}
	}
	return json.Unmarshal(raw, s)
}
