package services

import "strings"

// SnippetPart is a piece of a snippet: text, and whether it is a match.
type SnippetPart struct {
	Text  string
	Match bool
}

// SnippetParts splits a snippet at its « » marks, so that a page can show
// the matches highlighted while escaping every part as text.
func SnippetParts(s string) []SnippetPart {
	var parts []SnippetPart
	var cur strings.Builder
	in := false
	flush := func() {
		if cur.Len() > 0 {
			parts = append(parts, SnippetPart{cur.String(), in})
			cur.Reset()
		}
	}
	for _, r := range s {
		switch {
		case r == MatchOpen && !in, r == MatchClose && in:
			flush()
			in = !in
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return parts
}
