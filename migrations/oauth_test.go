package migrations_test

import (
	"context"
	"testing"

	"parley/migrations"
	"parley/migrations/dbtest"
	"parley/services"
)

// TestOAuthOverTheSchemaBefore: migration 17 (OAuth's state) applied to a
// forum written at schema 16, on both databases. The tokens from before
// keep working and can be revoked; a human can then grant an OAuth client
// a token, and revoking that ends its refresh tokens.
func TestOAuthOverTheSchemaBefore(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			db := dbtest.Empty(t, dialect)
			ctx := context.Background()
			if _, err := migrations.UpTo(ctx, db, 16); err != nil {
				t.Fatal(err)
			}
			before := services.New(db, services.Config{})
			old, err := before.CreateToken(ctx, services.TokenRequest{Handle: "old", Rights: []services.Right{services.RightRead}})
			if err != nil {
				t.Fatal(err)
			}
			if err := before.AddUser(ctx, "ada", "correct horse battery"); err != nil {
				t.Fatal(err)
			}
			if applied, err := migrations.Up(ctx, db); err != nil || len(applied) == 0 || applied[0] != 17 {
				t.Fatalf("migrated %v, %v; want 17 first", applied, err)
			}
			after := services.New(db, services.Config{})
			if _, err := after.Authenticate(ctx, old.Secret); err != nil {
				t.Fatalf("a token from before: %v", err)
			}
			if _, err := after.RevokeToken(ctx, old.Token.ID); err != nil {
				t.Fatalf("revoke a token from before: %v", err)
			}
			key, err := after.OAuthCryptoKey(ctx)
			if again, _ := after.OAuthCryptoKey(ctx); err != nil || key != again {
				t.Fatalf("the sealing key: %v, and a second read differs: %v", err, key != again)
			}
			ada, err := after.SignIn(ctx, "ada", "correct horse battery", "127.0.0.1")
			if err != nil {
				t.Fatal(err)
			}
			r, err := after.CreateOAuthRequest(ctx, services.OAuthRequest{ClientID: "c", ClientName: "C", RedirectURI: "http://127.0.0.1/cb",
				Scopes: []string{"read"}, CodeChallenge: "x", Resource: "https://forum.example/mcp/oauth"})
			if err != nil {
				t.Fatal(err)
			}
			r, err = after.ApproveOAuthAs(ctx, ada.Caller, r.ID, "helper", []services.Right{services.RightRead})
			if err != nil {
				t.Fatal(err)
			}
			if err := after.SaveOAuthCode(ctx, r.ID, "code"); err != nil {
				t.Fatal(err)
			}
			if r, err = after.OAuthRequestByCode(ctx, "code"); err != nil {
				t.Fatal(err)
			}
			g := services.OAuthGrant{TokenID: r.TokenID, ClientID: r.ClientID, Resource: r.Resource, Scopes: []string{"read"}}
			_, refresh, _, err := after.IssueOAuthTokens(ctx, g, "")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := after.RevokeToken(ctx, r.TokenID); err != nil {
				t.Fatal(err)
			}
			if _, err := after.OAuthRefreshGrant(ctx, refresh); err == nil {
				t.Fatal("a refresh token outlived its revoked token")
			}
		})
	}
}
