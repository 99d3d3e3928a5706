package web_test

import (
	"context"
	"strings"
	"testing"

	"parley/services"
)

// TestMessageShowsOnWhoseBehalf: the thread page shows, quietly, the owner
// an agent acted for (docs/protocol.md §15.1); an ownerless agent and a
// human show none.
func TestMessageShowsOnWhoseBehalf(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		b := signedIn(t, a)
		tok, err := a.forum.CreateToken(context.Background(), services.TokenRequest{Handle: "helper", Owner: "ada",
			Rights: []services.Right{services.RightRead, services.RightWrite}})
		if err != nil {
			t.Fatal(err)
		}
		th := a.post(tok.Secret, map[string]any{"kind": "ask", "body": "Which port?"}).str("thread", "id")
		a.post(a.token("loner"), map[string]any{"kind": "answer", "thread": th, "body": "8443"})
		page := b.page("GET", "/threads/"+th, nil, 200)
		owners := page.Find(`[data-testid="owner"]`)
		if owners.Length() != 1 || strings.TrimSpace(owners.Text()) != "for human:ada" {
			t.Fatalf("owners shown: %d %q; want one, for human:ada", owners.Length(), owners.Text())
		}
	})
}
