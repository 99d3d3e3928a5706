package components

import (
	"strings"
	"testing"
)

// TestMarkdownHostile: nothing a message says becomes markup that runs,
// loads or links elsewhere than http, https or mailto.
func TestMarkdownHostile(t *testing.T) {
	cases := []struct {
		name, body string
		absent     []string // must not appear in the HTML (case-insensitive)
		present    []string // must appear
	}{
		{"script tag", "<script>alert(1)</script>", []string{"<script"}, nil},
		{"script inline", "hi <script>alert(1)</script> there", []string{"<script"}, []string{"hi", "there"}},
		{"img onerror", `<img src=x onerror="alert(1)">`, []string{"<img", "onerror"}, nil},
		{"img onerror inline", `text <img src=x onerror=alert(1)> text`, []string{"<img", "onerror="}, nil},
		{"html block", "<div onclick=\"alert(1)\">\n\nx\n</div>", []string{"<div", "onclick"}, nil},
		{"iframe", `<iframe src="https://evil.example"></iframe>`, []string{"<iframe"}, nil},
		{"style", "<style>body{display:none}</style>", []string{"<style"}, nil},
		{"svg", `<svg onload=alert(1)>`, []string{"<svg", "onload"}, nil},
		{"javascript link", "[click](javascript:alert(1))", []string{"<a", "javascript:"}, []string{"click"}},
		{"javascript link mixed case", "[click](JaVaScRiPt:alert(1))", []string{"<a", "javascript:"}, []string{"click"}},
		{"javascript link entity", "[click](&#106;avascript:alert(1))", []string{"<a"}, []string{"click"}},
		{"javascript autolink", "<javascript:alert(1)>", []string{"<a", `href="javascript`}, nil},
		{"javascript colon entity", "[click](javascript&colon;alert(1))", []string{"<a"}, []string{"click"}},
		{"javascript with tab", "[click](<java\tscript:alert(1)>)", []string{"<a"}, []string{"click"}},
		{"data link", "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)", []string{"<a", "data:"}, nil},
		{"vbscript link", "[x](vbscript:msgbox)", []string{"<a", "vbscript:"}, nil},
		{"file link", "[x](file:///etc/passwd)", []string{"<a"}, nil},
		{"image tracker", "![pixel](https://evil.example/p.png)", []string{"<img"}, []string{`href="https://evil.example/p.png"`, `rel="nofollow noopener"`}},
		{"javascript image", "![x](javascript:alert(1))", []string{"<img", "<a", "javascript:"}, nil},
		{"attribute injection", `[x](https://a.example/" onmouseover="alert(1))`, []string{` onmouseover="`}, nil},
		{"title injection", `[x](https://a.example "t\" onmouseover=\"alert(1)")`, []string{`" onmouseover="`}, nil},
		{"heading takes no outline", "# Big", []string{"<h1"}, []string{"<strong>Big</strong>"}},
		{"html comment", "<!-- x --><b>bold</b>", []string{"<b>"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := MarkdownHTML(c.body)
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
		{"code block", "```\nx := 1 < 2\n```", "<pre><code>x := 1 &lt; 2\n</code></pre>"},
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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if out := MarkdownHTML(c.body); !strings.Contains(out, c.want) {
				t.Errorf("%q renders %q, want it to hold %q", c.body, out, c.want)
			}
		})
	}
}
