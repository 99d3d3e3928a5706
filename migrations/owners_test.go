package migrations_test

import (
	"context"
	"testing"

	"parley/migrations"
	"parley/migrations/dbtest"
	"parley/services"
)

// TestOwnersOverTheSchemaBefore: migration 15 (owners, docs/protocol.md
// §15.1) applied to a forum written at schema 14, on both databases. Every
// token from before is its own party (owner null) and its messages show
// no owner, until the operator assigns one; then what it posts shows it,
// recorded as an owner event, and what it posted before does not change.
func TestOwnersOverTheSchemaBefore(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			db := dbtest.Empty(t, dialect)
			ctx := context.Background()
			if _, err := migrations.UpTo(ctx, db, 14); err != nil {
				t.Fatal(err)
			}
			before := services.New(db, services.Config{Limits: beforeOwners()})
			tok, err := before.CreateToken(ctx, services.TokenRequest{Handle: "old", Rights: []services.Right{services.RightRead, services.RightWrite}})
			if err != nil {
				t.Fatal(err)
			}
			if err := before.AddUser(ctx, "alice", "correct horse battery"); err != nil {
				t.Fatal(err)
			}
			who, err := before.Authenticate(ctx, tok.Secret)
			if err != nil {
				t.Fatal(err)
			}
			root, err := before.Post(ctx, who, []byte(`{"kind":"ask","body":"Written before migration 15?"}`))
			if err != nil {
				t.Fatal(err)
			}

			if applied, err := migrations.Up(ctx, db); err != nil || len(applied) == 0 || applied[0] != 15 {
				t.Fatalf("migrated %v, %v; want 15 first", applied, err)
			}
			// A server migrates before it serves: connections that cached
			// plans of the old tokens table go, as they would with a restart.
			sqlDB, err := db.DB()
			if err != nil {
				t.Fatal(err)
			}
			sqlDB.SetMaxIdleConns(0)
			sqlDB.SetMaxIdleConns(2)
			after := services.New(db, services.Config{})
			who, err = after.Authenticate(ctx, tok.Secret)
			if err != nil {
				t.Fatal(err)
			}
			me, err := after.Whoami(ctx, who, services.WhoamiQuery{})
			if err != nil || me.Owner != nil {
				t.Fatalf("whoami after the migration: owner %v, %v; want null (its own party)", me.Owner, err)
			}
			ch, err := after.SetTokenOwner(ctx, tok.Token.ID, "alice", "operator")
			if err != nil || ch.Event.Type != "owner" || ch.Token.Owner == nil || *ch.Token.Owner != "human:alice" {
				t.Fatalf("set owner: %+v, %v", ch, err)
			}
			who, _ = after.Authenticate(ctx, tok.Secret)
			note, err := after.Post(ctx, who, []byte(`{"kind":"note","thread":"`+root.Thread.ID+`","body":"And after it.","from":{"extension":"w2"}}`))
			if err != nil {
				t.Fatal(err)
			}
			view, err := after.ReadThread(ctx, who, services.ThreadQuery{Thread: root.Thread.ID})
			if err != nil {
				t.Fatal(err)
			}
			if view.Messages[0].From.Owner != nil || note.Message.From.Owner == nil || *note.Message.From.Owner != "human:alice" {
				t.Fatalf("owners: %v before, %v after; want null, then human:alice", view.Messages[0].From.Owner, note.Message.From.Owner)
			}
		})
	}
}
