package services

import (
	"slices"
	"strings"
	"unicode"
)

// A search query is read the same way on both databases, here, before
// either sees it, so that both search for the same terms: words and
// "quoted phrases", all of which a message must contain. A word is a run of
// letters and digits; a word written with punctuation inside (linkd.conf,
// api/v1) is a phrase of its words, as both indexes split it that way.
// Nothing in a query is syntax to the database: each word reaches it as a
// bound value (PostgreSQL) or a quoted string (FTS5).

// term is one thing a query asks for: the lower-cased words of a word or
// phrase, which must follow each other in that order.
type term []string

// parseTerms reads a query into its terms. English stop words standing
// alone ("the", "how") are dropped, as PostgreSQL's english configuration
// drops them, unless the query holds nothing else; inside a phrase they
// stay.
func parseTerms(q string) []term {
	var terms []term
	var chunk strings.Builder
	quoted := false
	flush := func() {
		if t := wordsOf(chunk.String()); len(t) > 0 {
			terms = append(terms, t)
		}
		chunk.Reset()
	}
	for _, r := range q {
		switch {
		case r == '"':
			flush()
			quoted = !quoted
		case unicode.IsSpace(r) && !quoted:
			flush()
		default:
			chunk.WriteRune(r)
		}
	}
	flush()
	kept := slices.DeleteFunc(slices.Clone(terms), func(t term) bool { return len(t) == 1 && stopWords[t[0]] })
	if len(kept) == 0 {
		return terms
	}
	return kept
}

// wordsOf splits text into lower-cased words: runs of letters, digits and
// private-use characters, as FTS5's unicode61 tokenizer reads them.
func wordsOf(s string) term {
	var out term
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !wordRune(r) }) {
		out = append(out, strings.ToLower(w))
	}
	return out
}

func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

// ftsMatch is the FTS5 query for the terms: each a quoted phrase (its words
// hold no quote), all required.
func ftsMatch(terms []term) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = `"` + strings.Join(t, " ") + `"`
	}
	return strings.Join(parts, " AND ")
}

// unphrased is the terms with each phrase's words required one by one,
// in any order: what a bucket's words (search_buckets, kept without
// positions) can answer.
func unphrased(terms []term) []term {
	var out []term
	for _, t := range terms {
		for _, w := range t {
			out = append(out, term{w})
		}
	}
	return out
}

// pgTSQuery is the PostgreSQL tsquery expression for the terms, with its
// arguments: each word matches its 'simple' form (the word as written) or
// its 'english' form (its stem); the words of a phrase follow each other;
// all terms are required. Every function in it is immutable, so the planner
// folds it into a constant and estimates from the index's statistics how
// many messages it matches.
func pgTSQuery(terms []term) (string, []any) {
	var sql strings.Builder
	var args []any
	for i, t := range terms {
		if i > 0 {
			sql.WriteString(" && ")
		}
		sql.WriteString(strings.Repeat("tsquery_phrase(", len(t)-1))
		for j, w := range t {
			if j > 0 {
				sql.WriteString(", ")
			}
			// One lexeme when both forms are the same: the planner would
			// count 'x' | 'x' twice.
			sql.WriteString("(CASE WHEN plainto_tsquery('simple', ?) = plainto_tsquery('english', ?) THEN plainto_tsquery('simple', ?)" +
				" ELSE plainto_tsquery('simple', ?) || plainto_tsquery('english', ?) END)")
			if j > 0 {
				sql.WriteString(")")
			}
			args = append(args, w, w, w, w, w)
		}
	}
	return "(" + sql.String() + ")", args
}

// stopWords are PostgreSQL's english stop words (the Snowball list).
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`i me my myself we our ours ourselves you your yours yourself yourselves
		he him his himself she her hers herself it its itself they them their theirs themselves what which
		who whom this that these those am is are was were be been being have has had having do does did
		doing a an the and but if or because as until while of at by for with about against between into
		through during before after above below to from up down in out on off over under again further
		then once here there when where why how all any both each few more most other some such no nor
		not only own same so than too very s t can will just don should now`) {
		m[w] = true
	}
	return m
}()
