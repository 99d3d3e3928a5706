package components

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// allowedMarkup is every element the renderer may write, with the
// attributes each may carry.
var allowedMarkup = map[string][]string{
	"p": nil, "br": nil, "em": nil, "strong": nil, "del": nil, "code": {"class"}, "pre": {"tabindex"},
	"ul": nil, "ol": {"start"}, "li": nil, "blockquote": nil, "hr": nil, "a": {"href", "rel", "title"},
}

// checkMarkup parses what the renderer wrote as a browser would and fails
// on any element or attribute outside allowedMarkup, any link to an
// unsafe address, and any link without rel="nofollow noopener".
func checkMarkup(t *testing.T, body, out string) {
	t.Helper()
	root, err := html.Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data != "html" && n.Data != "head" && n.Data != "body" {
			allowed, ok := allowedMarkup[n.Data]
			if !ok {
				t.Errorf("%q renders a <%s> element: %s", body, n.Data, out)
			}
			rel := ""
			for _, a := range n.Attr {
				if !slices.Contains(allowed, a.Key) {
					t.Errorf("%q renders <%s %s=%q>: %s", body, n.Data, a.Key, a.Val, out)
				}
				if a.Key == "href" && !SafeURL(a.Val) {
					t.Errorf("%q links to %q: %s", body, a.Val, out)
				}
				if a.Key == "rel" {
					rel = a.Val
				}
			}
			if n.Data == "a" && rel != "nofollow noopener" {
				t.Errorf("%q renders a link without rel=\"nofollow noopener\": %s", body, out)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
}

// TestMarkdownHostile: nothing a message says becomes markup that runs,
// loads or links elsewhere than http, https, mailto or this forum.
func TestMarkdownHostile(t *testing.T) {
	cases := []struct {
		name, body string
		absent     []string // must not appear in the HTML (case-insensitive), beyond what checkMarkup checks
		present    []string // must appear
	}{
		{"script tag", "<script>alert(1)</script>", []string{"<script"}, []string{"&lt;script&gt;"}},
		{"script inline", "hi <script>alert(1)</script> there", []string{"<script"}, []string{"hi", "there"}},
		{"img onerror", `<img src=x onerror="alert(1)">`, []string{"<img"}, []string{"&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"}},
		{"img onerror inline", `text <img src=x onerror=alert(1)> text`, []string{"<img"}, nil},
		{"html block", "<div onclick=\"alert(1)\">\n\nx\n</div>", []string{"<div"}, nil},
		{"iframe", `<iframe src="https://evil.example"></iframe>`, []string{"<iframe"}, nil},
		{"style", "<style>body{display:none}</style>", []string{"<style"}, nil},
		{"svg", `<svg onload=alert(1)>`, []string{"<svg"}, nil},
		{"a tag", `<a href="javascript:alert(1)">x</a>`, []string{"<a"}, nil},
		{"javascript link", "[click](javascript:alert(1))", []string{"<a", "javascript:"}, []string{"click"}},
		{"javascript link mixed case", "[click](JaVaScRiPt:alert(1))", []string{"<a", "javascript:"}, []string{"click"}},
		{"javascript link entity", "[click](&#106;avascript:alert(1))", []string{"<a"}, []string{"click"}},
		{"javascript colon entity", "[click](javascript&colon;alert(1))", []string{"<a"}, []string{"click"}},
		{"javascript with tab", "[click](<java\tscript:alert(1)>)", []string{"<a"}, []string{"click"}},
		{"javascript autolink", "<javascript:alert(1)>", []string{"<a", `href="javascript`}, nil},
		{"data link", "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)", []string{"<a", "data:"}, nil},
		{"vbscript link", "[x](vbscript:msgbox)", []string{"<a", "vbscript:"}, nil},
		{"file link", "[x](file:///etc/passwd)", []string{"<a"}, nil},
		{"image tracker", "![pixel](https://evil.example/p.png)", []string{"<img"}, []string{`href="https://evil.example/p.png"`, `rel="nofollow noopener"`}},
		{"javascript image", "![x](javascript:alert(1))", []string{"<img", "<a", "javascript:"}, nil},
		{"nested image link", "[![x](https://i.example/p.png)](javascript:alert(1))", []string{"javascript:", "<img"}, nil},
		{"attribute injection", `[x](https://a.example/" onmouseover="alert(1))`, []string{` onmouseover="`}, nil},
		{"title injection", `[x](https://a.example "t\" onmouseover=\"alert(1)")`, []string{`" onmouseover="`}, nil},
		{"heading takes no outline", "# Big", []string{"<h1"}, []string{"<strong>Big</strong>"}},
		{"html comment", "<!-- x --><b>bold</b>", []string{"<b>", "<!--"}, []string{"&lt;b&gt;bold&lt;/b&gt;"}},
		{"html shown as text", "8443. <b>not bold</b>", []string{"<b>"}, []string{"&lt;b&gt;not bold&lt;/b&gt;"}},
		{"html block shown as text", "<div onclick=\"x()\">\nhi\n</div>", []string{"<div"}, []string{"&lt;div onclick=&quot;x()&quot;&gt;<br>\nhi<br>\n&lt;/div&gt;"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := MarkdownHTML(c.body)
			checkMarkup(t, c.body, out)
			low := strings.ToLower(out)
			for _, a := range c.absent {
				if strings.Contains(low, strings.ToLower(a)) {
					t.Errorf("%q renders %q, which holds %q", c.body, out, a)
				}
			}
			for _, p := range c.present {
				if !strings.Contains(out, p) {
					t.Errorf("%q renders %q, which lacks %q", c.body, out, p)
				}
			}
		})
	}
}

// TestMarkdownRenders: what Markdown is for still works.
func TestMarkdownRenders(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"code block", "```\nx := 1 < 2\n```", "<pre tabindex=\"0\"><code>x := 1 &lt; 2\n</code></pre>"},
		{"inline code", "use `go test`", "<code>go test</code>"},
		{"link with rel", "[spec](https://example.org/spec)", `<a href="https://example.org/spec" rel="nofollow noopener">spec</a>`},
		{"autolink", "see https://example.org/a?b=1 now", `<a href="https://example.org/a?b=1" rel="nofollow noopener">https://example.org/a?b=1</a>`},
		{"www autolink", "www.example.org", `<a href="http://www.example.org" rel="nofollow noopener">www.example.org</a>`},
		{"mailto", "<mailto:ada@example.org>", `href="mailto:ada@example.org" rel="nofollow noopener"`},
		{"relative link", "[thread](/threads/th_1)", `<a href="/threads/th_1" rel="nofollow noopener">thread</a>`},
		{"emphasis", "*really*", "<em>really</em>"},
		{"list", "- a\n- b", "<li>a</li>"},
		{"line breaks kept", "one\ntwo", "one<br>\ntwo"},
		{"plain text escaped", "a < b & c", "a &lt; b &amp; c"},
		{"generics kept", "use List<String> here", "use List&lt;String&gt; here"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := MarkdownHTML(c.body)
			checkMarkup(t, c.body, out)
			if !strings.Contains(out, c.want) {
				t.Errorf("%q renders %q, want it to hold %q", c.body, out, c.want)
			}
		})
	}
}

// TestMarkdownQuoteDepth: quotes nest at most maxQuoteDepth deep; what is
// deeper shows, flat, in the quote at that depth, and the HTML of a deep
// body stays near the size of a body quoted that deep (500 ">" gave 500
// nested blockquotes, 14.5 KB).
func TestMarkdownQuoteDepth(t *testing.T) {
	for _, c := range []struct {
		name     string
		body     string
		depth    int // blockquotes nested, at most
		maxBytes int
		mustShow []string
	}{
		{"three levels kept", "> a\n>> b\n>>> c", 3, 200, []string{"a", "b", "c"}},
		{"eight levels kept", strings.Repeat(">", 8) + " deep", 8, 300, []string{"deep"}},
		{"500 levels, one line", strings.Repeat(">", 500) + " zq", maxQuoteDepth, 400, []string{"zq"}},
		{"500 levels, a line each", func() string {
			var b strings.Builder
			for i := 1; i <= 500; i++ {
				fmt.Fprintf(&b, "%s l%d\n", strings.Repeat(">", i), i)
			}
			return b.String()
		}(), maxQuoteDepth, 7000, []string{"l1<", "l8<", "l9<", "l500<"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := MarkdownHTML(c.body)
			checkMarkup(t, c.body, out)
			depth, deepest := 0, 0
			for _, tag := range regexp.MustCompile(`</?blockquote>`).FindAllString(out, -1) {
				if tag == "<blockquote>" {
					depth++
					deepest = max(deepest, depth)
				} else {
					depth--
				}
			}
			if deepest != c.depth || depth != 0 {
				t.Errorf("blockquotes nested %d deep (balance %d), want %d", deepest, depth, c.depth)
			}
			if len(out) > c.maxBytes {
				t.Errorf("%d bytes of HTML for %d typed, want at most %d", len(out), len(c.body), c.maxBytes)
			}
			for _, s := range c.mustShow {
				if !strings.Contains(out, s) {
					t.Errorf("%q lost: %s", s, out)
				}
			}
		})
	}
}
