package services_test

import (
	"testing"

	"parley/services"
)

// openRequest stores an authorization request for scopes, as the
// authorization server does once the library has checked it.
func (w *world) openRequest(scopes ...string) services.OAuthRequest {
	w.t.Helper()
	r, err := w.forum.CreateOAuthRequest(w.ctx, services.OAuthRequest{ClientID: "https://client.example/meta.json", ClientName: "Example",
		RedirectURI: "http://127.0.0.1/cb", State: "s", Scopes: scopes, CodeChallenge: "c", Resource: "https://forum.example/mcp/oauth"})
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

// TestOAuthConsentRules: a grant never exceeds what the client asked for
// or what the human may grant, takes a handle that is new or the human's
// own, answers a request once, and is a human's act only.
func TestOAuthConsentRules(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		ada := w.human("ada")
		bob := w.human("bob")
		agent := w.agent("loner", services.RightRead, services.RightWrite, services.RightLock)
		// bob owns an agent already; loner is its own party.
		if _, err := w.forum.CreateTokenAs(w.ctx, bob, services.TokenRequest{Handle: "bobs", Rights: []services.Right{services.RightRead}}); err != nil {
			t.Fatal(err)
		}

		r := w.openRequest("read")
		c, err := w.forum.OAuthConsentAs(w.ctx, ada, r.ID)
		if err != nil || len(c.Requested) != 1 || len(c.Grantable) != 1 || c.Grantable[0] != services.RightRead {
			t.Fatalf("consent for scope read: %+v, %v; want read alone", c, err)
		}
		if c := must(w.forum.OAuthConsentAs(w.ctx, ada, w.openRequest().ID)); len(c.Requested) != 2 {
			t.Fatalf("no scope asks for %v; want read and write", c.Requested)
		}
		if c := must(w.forum.OAuthConsentAs(w.ctx, ada, w.openRequest("read", "write", "lock", "verify").ID)); len(c.Grantable) != 4 {
			t.Fatalf("a human may grant %v; want all four rights", c.Grantable)
		}

		for _, tc := range []struct {
			name   string
			who    services.Caller
			handle string
			rights []services.Right
			reason services.Reason
		}{
			{"an agent does not consent", agent, "x", []services.Right{services.RightRead}, services.TokenRightMissing},
			{"more than requested", ada, "x", []services.Right{services.RightRead, services.RightWrite}, services.TokenRightMissing},
			{"no right", ada, "x", nil, services.InvalidBody},
			{"a bad handle", ada, "Not A Handle", []services.Right{services.RightRead}, services.InvalidBody},
			{"another party's handle", ada, "bobs", []services.Right{services.RightRead}, services.InvalidBody},
			{"an ownerless handle", ada, "loner", []services.Right{services.RightRead}, services.InvalidBody},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := w.forum.ApproveOAuthAs(w.ctx, tc.who, r.ID, tc.handle, tc.rights)
				if ref, _ := services.AsRefusal(err); err == nil || ref.Reason != tc.reason {
					t.Fatalf("%v; want %s", err, tc.reason)
				}
			})
		}

		got, err := w.forum.ApproveOAuthAs(w.ctx, ada, r.ID, "helper", []services.Right{services.RightRead})
		if err != nil || got.TokenID == 0 || got.Identity != "ainotes:helper" {
			t.Fatalf("approve: %+v, %v", got, err)
		}
		if _, err := w.forum.ApproveOAuthAs(w.ctx, ada, r.ID, "helper", []services.Right{services.RightRead}); err == nil {
			t.Fatal("a request approved twice")
		}
		tokens := must(w.forum.ListTokens(w.ctx))
		if tok := tokens[0]; tok.ID != got.TokenID || tok.Owner == nil || *tok.Owner != "human:ada" || tok.Label != "OAuth · Example" {
			t.Fatalf("the grant's token: %+v; want owned by human:ada, labelled for the client", tok)
		}
		// A second grant may act as a handle the human owns.
		c = must(w.forum.OAuthConsentAs(w.ctx, ada, w.openRequest("read").ID))
		if len(c.Handles) != 1 || c.Handles[0] != "helper" {
			t.Fatalf("ada's handles: %v; want helper", c.Handles)
		}
		if _, err := w.forum.ApproveOAuthAs(w.ctx, ada, c.Request.ID, "helper", []services.Right{services.RightRead}); err != nil {
			t.Fatalf("a second grant as one's own handle: %v", err)
		}
		// Denying forgets the request.
		d := w.openRequest("read")
		if _, err := w.forum.DenyOAuthAs(w.ctx, ada, d.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := w.forum.OAuthRequestByID(w.ctx, d.ID); err == nil {
			t.Fatal("a denied request is still there")
		}
	})
}

// TestOAuthRevokingTheTokenEndsItsGrant: revoking the Parley token a grant
// became deletes its access and refresh tokens; a refresh token rotates.
func TestOAuthRevokingTheTokenEndsItsGrant(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		ada := w.human("ada")
		r := must(w.forum.ApproveOAuthAs(w.ctx, ada, w.openRequest("read").ID, "helper", []services.Right{services.RightRead}))
		g := services.OAuthGrant{TokenID: r.TokenID, ClientID: r.ClientID, Resource: r.Resource, Scopes: []string{"read"}}
		access, refresh, _, err := w.forum.IssueOAuthTokens(w.ctx, g, "")
		if err != nil {
			t.Fatal(err)
		}
		who, err := w.forum.AuthenticateOAuth(w.ctx, access, r.Resource)
		if err != nil || who.Identity != "ainotes:helper" || who.Owner != "human:ada" || who.Has(services.RightWrite) {
			t.Fatalf("the access token's caller: %+v, %v", who, err)
		}
		if _, err := w.forum.AuthenticateOAuth(w.ctx, access, "https://elsewhere.example/mcp/oauth"); err == nil {
			t.Fatal("a token for another resource was admitted")
		}
		_, next, _, err := w.forum.IssueOAuthTokens(w.ctx, g, refresh)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := w.forum.IssueOAuthTokens(w.ctx, g, refresh); err == nil {
			t.Fatal("a refresh token used twice")
		}
		if _, err := w.forum.RevokeTokenAs(w.ctx, ada, r.TokenID); err != nil {
			t.Fatal(err)
		}
		if _, err := w.forum.AuthenticateOAuth(w.ctx, access, r.Resource); err == nil {
			t.Fatal("an access token outlived its revoked token")
		}
		if _, err := w.forum.OAuthRefreshGrant(w.ctx, next); err == nil {
			t.Fatal("a refresh token outlived its revoked token")
		}
		var left int64
		w.db.Table("oauth_refresh").Count(&left)
		if left != 0 {
			t.Fatalf("%d refresh tokens left after revocation", left)
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
