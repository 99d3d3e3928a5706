package services

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A search hit's snippet is plain text: an excerpt of the message's body
// with each match wrapped in « and ». The body's own « and » show as ‹ and
// ›, so the marks are never ambiguous, and a page that shows a snippet
// splits it at the marks (SnippetParts) and escapes every part as text:
// nothing from the database is ever markup.

// The snippet's marks.
const (
	MatchOpen  = '«'
	MatchClose = '»'
)

// snippetChars is how much of a body a snippet shows at most, cut on
// word boundaries around the first match.
const snippetChars = 160

// The marks the databases put around matches while they highlight: control
// characters, which a message body could hold but whose count then
// betrays them (see markedRunes).
const (
	dbMarkOpen  = '\x02'
	dbMarkClose = '\x03'
)

// markedRunes reads a text highlighted by the database with dbMark* into
// a mask over the body's runes: true where a match is. The highlighted
// text must be the body (or, on PostgreSQL, the body with punctuation read
// as spaces) rune for rune once the marks are removed; when it is not (a
// body holding a mark character itself), nothing is marked rather than the
// wrong words.
func markedRunes(body, highlighted string) []bool {
	n := utf8.RuneCountInString(body)
	mask := make([]bool, 0, n)
	in := false
	for _, r := range highlighted {
		switch r {
		case dbMarkOpen:
			in = true
		case dbMarkClose:
			in = false
		default:
			mask = append(mask, in)
		}
	}
	if len(mask) != n {
		return nil
	}
	return mask
}

// orMasks merges two masks over the same body; a nil mask marks nothing.
func orMasks(a, b []bool) []bool {
	if a == nil {
		return b
	}
	for i := range b {
		a[i] = a[i] || b[i]
	}
	return a
}

// snippet builds a hit's snippet from the body and its match mask:
// whitespace collapsed, at most snippetChars characters around the first
// match, "…" where it was cut, matches in « ».
func snippet(body string, mask []bool) string {
	type char struct {
		r     rune
		match bool
	}
	var text []char
	for i, r := range []rune(body) {
		match := mask != nil && mask[i]
		switch {
		case unicode.IsSpace(r):
			if len(text) > 0 && text[len(text)-1].r != ' ' {
				text = append(text, char{' ', match})
			}
			continue
		case r == MatchOpen:
			r = '‹'
		case r == MatchClose:
			r = '›'
		}
		text = append(text, char{r, match})
	}
	for len(text) > 0 && text[len(text)-1].r == ' ' {
		text = text[:len(text)-1]
	}
	// Matches separated only by spaces and punctuation read as one, as
	// FTS5 highlights a phrase (linkd.conf) and PostgreSQL its words: a
	// run of them is marked only between two matches (a run after a word
	// that is no match, as "<b> " before a match, stays unmarked).
	for i := 0; i < len(text); {
		if text[i].match {
			i++
			continue
		}
		j := i
		for j < len(text) && !text[j].match && !wordRune(text[j].r) {
			j++
		}
		if i > 0 && text[i-1].match && j < len(text) && j > i && text[j].match {
			for k := i; k < j; k++ {
				text[k].match = true
			}
		}
		i = max(j, i+1)
	}
	start, end := 0, len(text)
	if len(text) > snippetChars {
		first := 0
		for i, c := range text {
			if c.match {
				first = i
				break
			}
		}
		// Some context before the first match, then cut on spaces.
		start = max(0, min(first-snippetChars/4, len(text)-snippetChars))
		for start > 0 && start < first && text[start-1].r != ' ' {
			start++
		}
		end = min(len(text), start+snippetChars)
		for end < len(text) && end > start+snippetChars/2 && text[end].r != ' ' {
			end--
		}
		for end > start && text[end-1].r == ' ' {
			end--
		}
	}
	var out strings.Builder
	if start > 0 {
		out.WriteString("…")
	}
	in := false
	for _, c := range text[start:end] {
		if c.match != in && !(c.r == ' ' && !in) {
			if in {
				out.WriteRune(MatchClose)
			} else {
				out.WriteRune(MatchOpen)
			}
			in = c.match
		}
		out.WriteRune(c.r)
	}
	if in {
		out.WriteRune(MatchClose)
	}
	if end < len(text) {
		out.WriteString("…")
	}
	return out.String()
}
