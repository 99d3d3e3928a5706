package components

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// allowedMarkup is every element the renderer may write, with the
// attributes each may carry.
var allowedMarkup = map[string][]string{
	"p": nil, "br": nil, "em": nil, "strong": nil, "del": nil, "code": {"class"}, "pre": nil,
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
