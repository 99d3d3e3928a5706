package services

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Fuzz targets of what search reads from clients and databases: a query's
// terms hold only words (nothing reaches a database as syntax), a search
// cursor is accepted only as issued, and a snippet's marks are balanced
// and never the body's own, whatever the body and its highlights.
//
//	go test -run '^$' -fuzz '^FuzzSnippet$' -fuzztime 30s ./services

func FuzzSearchTerms(f *testing.F) {
	for _, s := range []string{"port", `"which option" linkd.conf`, `" AND OR NOT * ^ :`, "the how", `"unclosed phrase`, "Straße 日本語 v2.1", "\x00\u00ab"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		for _, term := range parseTerms(q) {
			if len(term) == 0 {
				t.Fatalf("%q: an empty term", q)
			}
			for _, w := range term {
				if w == "" || strings.IndexFunc(w, func(r rune) bool { return !wordRune(r) }) >= 0 {
					t.Fatalf("%q: word %q holds more than letters and digits", q, w)
				}
			}
		}
	})
}

func FuzzSearchCursor(f *testing.F) {
	for _, s := range []string{"", encodeSearchCursor(searchCursor{0.1, 7}), encodeSearchCursor(searchCursor{1.0999999, 9e15}), "s1.", "s1.MHw3", "c1.MTA", "s1.TmFOfDE"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := decodeSearchCursor(s)
		switch {
		case err != nil:
			if !isInvalidBody(err, "cursor") {
				t.Fatalf("%q: refusal %v", s, err)
			}
		case c == nil:
			if s != "" {
				t.Fatalf("%q read as no cursor", s)
			}
		default:
			back, err := decodeSearchCursor(encodeSearchCursor(*c))
			if err != nil || *back != *c {
				t.Fatalf("%q → %+v does not round-trip: %+v %v", s, *c, back, err)
			}
		}
	})
}

func FuzzSnippet(f *testing.F) {
	f.Add("Which \x02port\x03 should «linkd» use?", "Which port should «linkd» use?")
	f.Add("\x02a\x03 \x02b\x03", "a b")
	f.Add("x\x02", "x\x02")
	f.Add("<b> \x02zq1\x03", "<b> zq1")
	f.Add(strings.Repeat("word ", 100)+"\x02needle\x03", strings.Repeat("word ", 100)+"needle")
	f.Fuzz(func(t *testing.T, highlighted, body string) {
		if !utf8.ValidString(body) || !utf8.ValidString(highlighted) {
			return
		}
		s := snippet(body, markedRunes(body, highlighted))
		depth := 0
		for _, r := range s {
			switch r {
			case MatchOpen:
				depth++
			case MatchClose:
				depth--
			}
			if depth < 0 || depth > 1 {
				t.Fatalf("unbalanced marks in %q", s)
			}
		}
		if depth != 0 {
			t.Fatalf("unbalanced marks in %q", s)
		}
		var text strings.Builder
		for _, p := range SnippetParts(s) {
			if strings.ContainsAny(p.Text, "«»") {
				t.Fatalf("a part holds a mark: %+v", p)
			}
			text.WriteString(p.Text)
		}
		if strings.NewReplacer("«", "", "»", "").Replace(s) != text.String() {
			t.Fatalf("parts of %q do not make its text", s)
		}
		if n := utf8.RuneCountInString(text.String()); n > snippetChars+2 { // and two "…"
			t.Fatalf("snippet %q: %d characters", s, n)
		}
	})
}
