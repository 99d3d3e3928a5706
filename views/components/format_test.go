package components

import (
	"testing"
	"time"
)

func TestAgo(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "just now"},
		{-59 * time.Second, "just now"},
		{-5 * time.Minute, "5 min ago"},
		{-3*time.Hour - 59*time.Minute, "3 h ago"},
		{-30 * time.Hour, "yesterday"},
		{-4 * 24 * time.Hour, "4 days ago"},
		{-40 * 24 * time.Hour, "21 Oct 2026"},
		{5 * time.Minute, "in 5 min"},
		{30 * time.Hour, "in 1 day"},
	} {
		if got := Ago(now.Add(c.d), now); got != c.want {
			t.Errorf("Ago(now%+v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestCut(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short title", 80, "short title"},
		{"Should the proposal be confirmed before the deadline", 30, "Should the proposal be…"},
		{"Überlänge ändert Wörter nicht", 12, "Überlänge…"},
		{"abcdefghijklmnopqrstuvwxyz", 10, "abcdefghij…"},
	} {
		if got := Cut(c.in, c.n); got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestHeadline(t *testing.T) {
	cut := "Naming: the service is `shortener` in the design doc and `linkd` in the repo. Wh"
	if got, want := Headline(cut), "Naming: the service is shortener in the design doc and linkd in the repo…"; got != want {
		t.Errorf("Headline(%q) = %q, want %q", cut, got, want)
	}
	if got := Headline("Which port?\n\n443 is the proxy's, and 8080 is parley's own; what is left for linkd"); got != "Which port?" {
		t.Errorf("a question with details: %q", got)
	}
	if got := Headline("Ship on Friday?"); got != "Ship on Friday?" {
		t.Errorf("a short title changed: %q", got)
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 messages", 1: "1 message", 2: "2 messages"} {
		if got := Count(n, "message"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestHeadlineIsPlainText(t *testing.T) {
	for _, c := range []struct{ title, want string }{
		{"Is **bold** fine?", "Is bold fine?"},
		{"Run `make test` first", "Run make test first"},
		{"See [the docs](https://example.org/d) now", "See the docs now"},
		{"Visit https://example.org please", "Visit https://example.org please"},
		{"List<String> & <b>x</b>", "List<String> & <b>x</b>"},
		{"First line *em*\nsecond line", "First line em"},
		{"plain", "plain"},
	} {
		if got := Headline(c.title); got != c.want {
			t.Errorf("Headline(%q) = %q, want %q", c.title, got, c.want)
		}
	}
}

func TestHeadlineKeepsMarkupAsText(t *testing.T) {
	if got := Headline("<script>alert(1)</script> Which port?"); got != "<script>alert(1)</script> Which port?" {
		t.Errorf("Headline = %q", got)
	}
}
