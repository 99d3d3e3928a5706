package components

import (
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// PlainText is a line of Markdown as the text a reader sees: emphasis,
// code spans and links give their words ("**bold** [docs](u)" → "bold
// docs"), an autolink its address, and raw HTML stays the text it is, as
// the page shows it. Titles and quotes use it, so a list never shows
// `**`, backticks or "[…](…)".
func PlainText(line string) string {
	src := []byte(line)
	doc := markdown.Parser().Parse(text.NewReader(src))
	var b strings.Builder
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			if n.Kind() == ast.KindParagraph && n.NextSibling() != nil {
				b.WriteByte(' ')
			}
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Text:
			b.Write(n.Segment.Value(src))
			if n.SoftLineBreak() || n.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(n.Value)
		case *ast.AutoLink:
			b.Write(n.Label(src))
			return ast.WalkSkipChildren, nil
		case *ast.RawHTML:
			for i := 0; i < n.Segments.Len(); i++ {
				seg := n.Segments.At(i)
				b.Write(seg.Value(src))
			}
			return ast.WalkSkipChildren, nil
		case *ast.CodeBlock, *ast.FencedCodeBlock, *ast.HTMLBlock:
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				b.Write(seg.Value(src))
			}
			if h, ok := n.(*ast.HTMLBlock); ok && h.HasClosure() {
				b.Write(h.ClosureLine.Value(src))
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return strings.Join(strings.Fields(b.String()), " ")
}
