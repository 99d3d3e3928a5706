package components

import (
	"bytes"
	stdhtml "html"
	"net/url"
	"strings"
	"unicode"

	"github.com/a-h/templ"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdown renders message bodies. The stored body stays the plain text
// the author sent (the API returns it as such); only the page renders it.
//
// Safety: raw HTML is never passed through: htmlAsText shows it as the
// text it is (goldmark would omit it, and "List<String>" would lose a
// word; html.WithUnsafe is not set either way); attribute syntax is off; the
// transformer below keeps links only to http, https, mailto and relative
// addresses, gives them rel="nofollow noopener", turns images into links
// (a page loads nothing a message names) and headings into strong
// paragraphs (a message does not take over the page's outline), and
// flattens quotes nested deeper than maxQuoteDepth. A table test in
// markdown_test.go tries hostile inputs.
var markdown = goldmark.New(
	goldmark.WithExtensions(extension.Linkify, extension.Strikethrough),
	goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(safeLinks{}, 100))),
	// Line breaks as typed: bodies were plain text before they were
	// Markdown, and people write short lines.
	goldmark.WithRendererOptions(html.WithHardWraps(), renderer.WithNodeRenderers(util.Prioritized(htmlAsText{}, 100))),
)

// Markdown renders a message body as safe HTML.
func Markdown(body string) templ.Component {
	return templ.Raw(MarkdownHTML(body))
}

// MarkdownHTML is the HTML Markdown writes.
func MarkdownHTML(body string) string {
	var buf bytes.Buffer
	if err := markdown.Convert([]byte(body), &buf); err != nil {
		// Rendering bytes into a buffer does not fail; should it, the
		// text stays readable.
		return templ.EscapeString(body)
	}
	// A code block scrolls sideways rather than widen a phone's page, so a
	// keyboard must be able to reach it (axe scrollable-region-focusable).
	// Every "<pre>" here is goldmark's own: raw HTML is escaped above.
	return strings.ReplaceAll(buf.String(), "<pre>", `<pre tabindex="0">`)
}

// SafeURL reports whether a link may point at u: http, https, mailto, or
// an address without a scheme (relative to this forum).
// The address is read as the browser will read it: Markdown resolves
// character references in it ("&#106;avascript:"), and browsers drop tabs
// and newlines inside a scheme, so an address holding a control character
// is refused outright.
func SafeURL(u string) bool {
	u = stdhtml.UnescapeString(strings.TrimSpace(u))
	if strings.ContainsFunc(u, unicode.IsControl) {
		return false
	}
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	switch strings.ToLower(p.Scheme) {
	case "", "http", "https", "mailto":
		return true
	}
	return false
}

// maxQuoteDepth is how deep quotes nest on a page; a quote deeper than
// that is shown flat, as part of the quote at this depth. Each level
// indents by about 13 px (padding and border, static/css): 8 levels take
// 100 px of a 390 px phone and leave the text a column to read, and a
// reply chain quoted in full rarely goes deeper. Without a bound, a
// body of 500 ">" rendered 500 nested blockquotes, 14.5 KB of HTML
// (and a page whose text column was gone) for 1 KB typed.
const maxQuoteDepth = 8

// safeLinks rewrites the parsed body before it is rendered.
type safeLinks struct{}

func (safeLinks) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	source := reader.Source()
	var unsafe, images, headings, deepQuotes []ast.Node
	quotes := 0 // blockquotes around the node walked
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if n.Kind() == ast.KindBlockquote {
			if !entering {
				quotes--
				return ast.WalkContinue, nil
			}
			if quotes++; quotes > maxQuoteDepth {
				deepQuotes = append(deepQuotes, n)
			}
		}
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			if !SafeURL(string(n.Destination)) {
				unsafe = append(unsafe, n)
			} else {
				n.SetAttributeString("rel", []byte("nofollow noopener"))
			}
		case *ast.AutoLink:
			if !SafeURL(string(n.URL(source))) {
				unsafe = append(unsafe, n)
			} else {
				n.SetAttributeString("rel", []byte("nofollow noopener"))
			}
		case *ast.Image:
			images = append(images, n)
		case *ast.Heading:
			headings = append(headings, n)
		}
		return ast.WalkContinue, nil
	})
	for _, n := range images {
		img := n.(*ast.Image)
		if !SafeURL(string(img.Destination)) {
			unwrap(img)
			continue
		}
		link := ast.NewLink()
		link.Destination, link.Title = img.Destination, img.Title
		link.SetAttributeString("rel", []byte("nofollow noopener"))
		moveChildren(img, link)
		img.Parent().ReplaceChild(img.Parent(), img, link)
	}
	for _, n := range unsafe {
		if a, ok := n.(*ast.AutoLink); ok {
			// The address stays, as text: readable, not clickable.
			seg := ast.NewString(a.Label(source))
			a.Parent().ReplaceChild(a.Parent(), a, seg)
			continue
		}
		unwrap(n)
	}
	// Outermost first: each one's content, deeper quotes included, moves
	// up into the quote at maxQuoteDepth, and is flattened in turn.
	for _, q := range deepQuotes {
		unwrap(q)
	}
	for _, h := range headings {
		p := ast.NewParagraph()
		strong := ast.NewEmphasis(2)
		moveChildren(h, strong)
		p.AppendChild(p, strong)
		p.SetLines(h.Lines())
		h.Parent().ReplaceChild(h.Parent(), h, p)
	}
}

// unwrap replaces a node with its children: a link's text without the link.
func unwrap(n ast.Node) {
	parent := n.Parent()
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		parent.InsertBefore(parent, n, c)
		c = next
	}
	parent.RemoveChild(parent, n)
}

func moveChildren(from, to ast.Node) {
	for c := from.FirstChild(); c != nil; {
		next := c.NextSibling()
		to.AppendChild(to, c)
		c = next
	}
}

// htmlAsText renders what Markdown reads as raw HTML, inline or as a
// block, as escaped text: the author typed those characters, and a page
// shows them rather than running them or dropping them.
type htmlAsText struct{}

func (htmlAsText) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindRawHTML, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			segs := n.(*ast.RawHTML).Segments
			for i := range segs.Len() {
				seg := segs.At(i)
				_, _ = w.Write(util.EscapeHTML(seg.Value(source)))
			}
		}
		return ast.WalkSkipChildren, nil
	})
	r.Register(ast.KindHTMLBlock, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		b := n.(*ast.HTMLBlock)
		var lines [][]byte
		for i := range b.Lines().Len() {
			line := b.Lines().At(i)
			lines = append(lines, line.Value(source))
		}
		if b.HasClosure() {
			lines = append(lines, b.ClosureLine.Value(source))
		}
		_, _ = w.WriteString("<p>")
		for i, line := range lines {
			if i > 0 {
				_, _ = w.WriteString("<br>\n")
			}
			_, _ = w.Write(util.EscapeHTML(bytes.TrimRight(line, "\r\n")))
		}
		_, _ = w.WriteString("</p>\n")
		return ast.WalkContinue, nil
	})
}
